import subprocess
from .h7 import f7

def f6(x):
    subprocess.run(x, shell=True)
    f7(x)
