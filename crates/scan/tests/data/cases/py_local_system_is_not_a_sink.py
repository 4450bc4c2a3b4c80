# expect: none
def system(x):
    return x
system(input())
