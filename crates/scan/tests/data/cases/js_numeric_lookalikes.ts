// expect: exec_sync_dynamic_string+ exec_sync_dynamic_string exec_sync_dynamic_string+
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { execSync } from 'node:child_process';
const server = new McpServer({ name: 'x', version: '1' });
function parent(process: { ppid: string }) {
  // A local named `process`: its ppid is whatever the caller put there.
  return execSync(`ps -p ${process.ppid}`, { timeout: 1000, maxBuffer: 1 << 20 });
}
server.tool('ps', {}, async ({ pid, list }) => {
  // A string from the caller, and the length of an object the caller wrote.
  execSync(`ps -p ${pid}`, { timeout: 1000, maxBuffer: 1 << 20 });
  execSync(`ps -p ${list.length}`, { timeout: 1000, maxBuffer: 1 << 20 });
  return { content: [] };
});
