// expect: unbounded_buffer missing_timeout
import { execSync } from 'child_process';
// The parent's pid is a number: nothing in it can be shell syntax.
const ppid = process.ppid;
const parent = execSync(`ps -p ${ppid} -o command=`, { encoding: 'utf8' });
