# expect: shell_true_option
# A generator that is a call's only argument: tree-sitter's tree makes it the arguments, and
# its body a value there; the list runs a shell on a dynamic script.
def run_each(scripts, stream):
    return stream(["sh", "-c", script] for script in scripts)
