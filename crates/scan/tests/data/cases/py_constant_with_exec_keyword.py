# expect: none
import os
CMD = "ls -la"
def launch(runner):
    runner.start(exec="fast")
os.system(CMD)
