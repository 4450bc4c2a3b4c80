# expect: none
import argparse
import subprocess
ARGV = ["ls", "-l"]
def main():
    args = argparse.ArgumentParser().parse_args()
    print(vars(args))
    return subprocess.run(ARGV, timeout=5)
