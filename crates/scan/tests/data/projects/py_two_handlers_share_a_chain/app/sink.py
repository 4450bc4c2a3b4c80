import subprocess


def s1(x, y):
    subprocess.run(['git', 'log', x])
    subprocess.run(['git', 'log', y])

def s2(x, y):
    subprocess.run(['git', 'log', x])
    subprocess.run(['git', 'log', y])

def s3(x, y):
    subprocess.run(['git', 'log', x])
    subprocess.run(['git', 'log', y])

def s4(x, y):
    subprocess.run(['git', 'log', x])
    subprocess.run(['git', 'log', y])

def s5(x, y):
    subprocess.run(['git', 'log', x])
    subprocess.run(['git', 'log', y])

def s6(x, y):
    subprocess.run(['git', 'log', x])
    subprocess.run(['git', 'log', y])

def s7(x, y):
    subprocess.run(['git', 'log', x])
    subprocess.run(['git', 'log', y])
