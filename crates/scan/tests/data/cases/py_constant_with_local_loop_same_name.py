# expect: none
import os
CMD = "uptime"
def show(commands):
    for CMD in commands:
        print(CMD)
os.system(CMD)
