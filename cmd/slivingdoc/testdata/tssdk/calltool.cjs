'use strict';

// Drives `slivingdoc serve` with the official TypeScript SDK's Client, whose
// callTool validates every structuredContent against the outputSchema the
// server advertised (tools/list), error results included. The Go test
// (mcp_tssdk_test.go) sends one call per stdin line, {"tool": ..., "args":
// ...}, and reads one line back per call: {"ok": true, "result": ...}, or
// {"ok": false, "code": ..., "message": ...} when callTool threw.
//
// Environment: SDK_PACKAGE_JSON (a package.json of the directory whose
// node_modules holds @modelcontextprotocol/sdk), SERVER_ARGV and SERVER_ENV
// (JSON: the server's argv and environment).

const { createRequire } = require('module');
const readline = require('readline');

async function main() {
  const req = createRequire(process.env.SDK_PACKAGE_JSON);
  const { Client } = req('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = req('@modelcontextprotocol/sdk/client/stdio.js');
  const [command, ...args] = JSON.parse(process.env.SERVER_ARGV);
  const transport = new StdioClientTransport({ command, args, env: JSON.parse(process.env.SERVER_ENV), stderr: 'inherit' });
  const client = new Client({ name: 'slivingdoc-tssdk-test', version: '0' });
  await client.connect(transport);
  // callTool validates only against schemas it has listed.
  const list = await client.listTools();
  process.stdout.write(JSON.stringify({ ok: true, result: { tools: list.tools.map((t) => t.name) } }) + '\n');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    const { tool, args: callArgs } = JSON.parse(line);
    let out;
    try {
      out = { ok: true, result: await client.callTool({ name: tool, arguments: callArgs }) };
    } catch (e) {
      out = { ok: false, code: e.code, message: String(e.message) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
  await client.close();
}

main().catch((e) => {
  process.stderr.write('calltool.cjs: ' + (e && e.stack ? e.stack : String(e)) + '\n');
  process.exit(1);
});
