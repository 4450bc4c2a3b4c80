import subprocess
from .h2 import f2

def f1(x):
    subprocess.run(x, shell=True)
    f2(x)
