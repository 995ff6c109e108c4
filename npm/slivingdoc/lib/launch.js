'use strict';

// The launcher: find the binary for this host in its platform package,
// prove it is the published one, then run it as if it had been started
// directly.
//
//   host platform --platforms.js--> @slivingdoc/<os>-<cpu> (optional dependency)
//   ../SHA256SUMS (shipped in this package) --> expected SHA-256 of the asset
//   sha256(binary) === expected ? spawn(binary, argv, stdio inherited) : refuse
//
// Nothing here writes to stdout: for `serve`, stdout is the MCP protocol
// stream and belongs to the binary alone. Every refusal goes to stderr as
// "slivingdoc: <TOKEN>: <what happened and what to do>" with exit status 2
// (the binary's own code for a setup error). No network access, ever.

const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

const { platforms, packageName, assetName, binaryPath } = require('./platforms');

const EXIT_SETUP = 2;

// Signals a host or a terminal sends to stop or reload the server. SIGUSR1 is
// left alone: Node reserves it for its debugger.
const forwardedSignals = process.platform === 'win32'
  ? ['SIGINT', 'SIGTERM', 'SIGBREAK']
  : ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];

class LaunchError extends Error {
  constructor(token, message) {
    super(message);
    this.token = token;
  }
}

const root = path.join(__dirname, '..');
const ownVersion = require(path.join(root, 'package.json')).version;
const installHint = `Reinstall with \`npm install slivingdoc@${ownVersion}\`, or download the release binary and check it against SHA256SUMS (see https://github.com/slivingdoc/slivingdoc#install).`;

/** The release-matrix entry for this host, or a refusal. */
function hostPlatform() {
  const key = `${process.platform}-${process.arch}`;
  const p = platforms.find((e) => e.node === key);
  if (!p) {
    throw new LaunchError('PLATFORM_UNSUPPORTED',
      `no slivingdoc binary is published for ${key} (published: ${platforms.map((e) => e.node).join(', ')}). ` +
      'Build one from source with `go install github.com/slivingdoc/slivingdoc/cmd/slivingdoc@latest`.');
  }
  const arm = Number(process.config.variables.arm_version);
  if (p.armVersion && arm && arm < p.armVersion) {
    throw new LaunchError('PLATFORM_UNSUPPORTED',
      `the ${key} binary needs ARMv${p.armVersion}; this CPU is ARMv${arm}. ` +
      'Build one from source with `go install github.com/slivingdoc/slivingdoc/cmd/slivingdoc@latest`.');
  }
  return p;
}

/**
 * Parses SHA256SUMS ("<64 hex>  <name>" per LF-ended line) into a Map. A
 * malformed file is refused whole: a partial read could vouch for nothing.
 */
function readSums(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new LaunchError('CHECKSUMS_MISSING', `cannot read the published checksums ${file}: ${err.code || err.message}. ${installHint}`);
  }
  const sums = new Map();
  const lines = text.split('\n');
  if (lines.pop() !== '') {
    throw new LaunchError('CHECKSUMS_MISSING', `${file} is malformed (no final newline). ${installHint}`);
  }
  for (const line of lines) {
    const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
    if (!m || sums.has(m[2])) {
      throw new LaunchError('CHECKSUMS_MISSING', `${file} is malformed at ${JSON.stringify(line)}. ${installHint}`);
    }
    sums.set(m[2], m[1]);
  }
  return sums;
}

/** The installed binary of platform p, from its platform package. */
function locateBinary(p) {
  const name = packageName(p);
  let manifest;
  try {
    // Resolved from this file, so npm's hoisted layout, pnpm's symlinks and
    // Yarn's resolver all find the dependency they installed.
    manifest = require.resolve(`${name}/package.json`, { paths: [root] });
  } catch {
    throw new LaunchError('PLATFORM_PACKAGE_MISSING',
      `the package ${name}, which holds the slivingdoc binary for this machine, is not installed. ` +
      'npm leaves it out when optional dependencies are omitted (--omit=optional, --no-optional) ' +
      `or when a lockfile made on another platform is reused. ${installHint}`);
  }
  const version = JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
  if (version !== ownVersion) {
    throw new LaunchError('PLATFORM_PACKAGE_MISMATCH',
      `${name} is version ${version}, but this launcher is slivingdoc ${ownVersion}. ${installHint}`);
  }
  return path.join(path.dirname(manifest), binaryPath(p));
}

/** Refuses the binary unless its SHA-256 is the published one. */
function verifyBinary(binary, asset, sums) {
  const expected = sums.get(asset);
  if (!expected) {
    throw new LaunchError('CHECKSUMS_MISSING', `the published checksums list no ${asset}. ${installHint}`);
  }
  let actual;
  try {
    actual = crypto.createHash('sha256').update(fs.readFileSync(binary)).digest('hex');
  } catch (err) {
    throw new LaunchError('BINARY_MISSING', `cannot read ${binary}: ${err.code || err.message}. ${installHint}`);
  }
  if (actual !== expected) {
    throw new LaunchError('CHECKSUM_MISMATCH',
      `refusing to run ${binary}: its SHA-256 ${actual} does not match the published ${expected} for ${asset}. ` +
      `The file was altered or damaged after publication. ${installHint}`);
  }
}

/** npm does not always keep the execute bit; restore it on the verified file. */
function ensureExecutable(binary) {
  if (process.platform === 'win32') return;
  try {
    fs.accessSync(binary, fs.constants.X_OK);
  } catch {
    try {
      fs.chmodSync(binary, 0o755);
    } catch (err) {
      throw new LaunchError('BINARY_NOT_EXECUTABLE', `${binary} is not executable and cannot be made so: ${err.code || err.message}.`);
    }
  }
}

/**
 * Runs the binary with our argv and stdio and ends this process the way the
 * binary ended: the same exit code, or the same signal re-raised on us.
 */
function run(binary, args) {
  let child;
  const forward = (signal) => {
    // A terminal signals the whole process group, so the child may already
    // have it; a second delivery is harmless for slivingdoc, a lost one is not.
    try { child.kill(signal); } catch { /* already gone */ }
  };
  // Before the spawn: from here on a stop signal is ours to pass on, not
  // Node's default death. Handlers run from the event loop, so after spawn
  // has returned and child is set.
  for (const s of forwardedSignals) process.on(s, forward);
  child = spawn(binary, args, { stdio: 'inherit', windowsHide: true });
  child.on('error', (err) => {
    process.stderr.write(`slivingdoc: SPAWN_FAILED: cannot start ${binary}: ${err.code || err.message}.\n`);
    process.exit(EXIT_SETUP);
  });
  child.on('exit', (code, signal) => {
    for (const s of forwardedSignals) process.off(s, forward);
    if (signal) {
      // With our handlers gone, the default action applies: we die of the
      // same signal, which is what a parent waiting on us should see.
      process.kill(process.pid, signal);
      // Reached only for a signal whose default action is not to terminate.
      process.exit(128 + (os.constants.signals[signal] || 0));
    }
    process.exit(code);
  });
}

function main(argv) {
  try {
    const p = hostPlatform();
    const binary = locateBinary(p);
    verifyBinary(binary, assetName(p, ownVersion), readSums(path.join(root, 'SHA256SUMS')));
    ensureExecutable(binary);
    run(binary, argv);
  } catch (err) {
    if (!(err instanceof LaunchError)) throw err;
    process.stderr.write(`slivingdoc: ${err.token}: ${err.message}\n`);
    process.exitCode = EXIT_SETUP;
  }
}

module.exports = { main, readSums, LaunchError };
