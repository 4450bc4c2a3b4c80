import subprocess
class ShellProcess:
    def __init__(self, command="/bin/bash"):
        self.command = command
    def run(self, args):
        if isinstance(args, str):
            args = [args]
        commands = ";".join(args)
        if not commands.startswith(self.command):
            commands = f"{self.command} {commands}"
        return self.exec(commands)
    def exec(self, commands):
        if isinstance(commands, str):
            commands = [commands]
        commands = ";".join(commands)
        return subprocess.run(commands, shell=True, check=True, timeout=5).stdout
