def evaluate(expression):
    return eval(expression)
