# expect: none
import argparse
import os
CMD = "ls -la"
parser = argparse.ArgumentParser()
args = parser.parse_args()
print(vars(args))
os.system(CMD)
