// expect: none
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { execSync } from 'node:child_process';
const server = new McpServer({ name: 'x', version: '1' });
server.tool('signal', {}, async ({ pid, seconds }) => {
  // Tool input, but only as numbers.
  execSync(`kill -TERM ${parseInt(pid, 10)}`, { timeout: 1000, maxBuffer: 1 << 20 });
  execSync(`sleep ${Number(seconds) * 2} && kill -${Math.abs(seconds)} ${-pid}`, { timeout: 1000, maxBuffer: 1 << 20 });
  return { content: [] };
});
