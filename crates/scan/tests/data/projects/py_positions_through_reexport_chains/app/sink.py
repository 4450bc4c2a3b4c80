import subprocess


def run(p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13):
    subprocess.run(['git', 'log', p0])
    subprocess.run(['git', 'log', p1])
    subprocess.run(['git', 'log', p2])
    subprocess.run(['git', 'log', p3])
    subprocess.run(['git', 'log', p4])
    subprocess.run(['git', 'log', p5])
    subprocess.run(['git', 'log', p6])
    subprocess.run(['git', 'log', p7])
    subprocess.run(['git', 'log', p8])
    subprocess.run(['git', 'log', p9])
    subprocess.run(['git', 'log', p10])
    subprocess.run(['git', 'log', p11])
    subprocess.run(['git', 'log', p12])
    subprocess.run(['git', 'log', p13])
