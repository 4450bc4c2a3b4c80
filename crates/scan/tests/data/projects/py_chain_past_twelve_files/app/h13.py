import subprocess

def f13(x):
    subprocess.run(x, shell=True)
