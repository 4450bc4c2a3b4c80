import subprocess
from .h12 import f12

def f11(x):
    subprocess.run(x, shell=True)
    f12(x)
