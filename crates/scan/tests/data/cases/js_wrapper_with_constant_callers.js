// expect: none
const { exec } = require("child_process");
const isWindows = process.platform === "win32";
function execAsync(command) {
  return exec(isWindows ? `cmd.exe /c ${command}` : command, { timeout: 5000, maxBuffer: 1 << 20 });
}
execAsync('killall "Claude"');
execAsync("taskkill /F /IM Claude.exe");
