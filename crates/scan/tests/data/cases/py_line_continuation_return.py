# expect: missing_timeout
import subprocess
# A line continuation after `return` is not the returned value: the command is a constant.
def listing():
    return \
        "ls -l"
def run():
    subprocess.call(listing(), shell=True)
