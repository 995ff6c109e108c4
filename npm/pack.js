#!/usr/bin/env node
'use strict';

// Builds the npm tarballs from the release binaries (`make npm-pack`):
//
//   <dist>/SHA256SUMS + <dist>/slivingdoc-v<V>-<os>-<arch>[.exe]
//     -> <out>/stage/<platform>/   @slivingdoc/<platform>: package.json (from
//                                  npm/platform/) and bin/slivingdoc[.exe]
//     -> <out>/stage/slivingdoc/   the launcher (npm/slivingdoc/), its
//                                  optionalDependencies pinned to V and the
//                                  release SHA256SUMS shipped verbatim
//     -> <out>/*.tgz               `npm pack` of each stage directory
//
// Every binary is checked against SHA256SUMS before it is packed, so a
// tarball can only ever hold what the sums vouch for. The launcher always
// names every platform of the matrix; --platforms limits which platform
// packages are built (the tests build only the host's).
//
// Usage: node npm/pack.js --version V --dist DIR --out DIR [--platforms "linux/amd64 ..."]

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const { platforms, packageName, assetName, binaryPath } = require('./slivingdoc/lib/platforms');
const { readSums } = require('./slivingdoc/lib/launch');

// semver.org's grammar: no leading zeros, optional pre-release and build.
const semver = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-((0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

function fail(msg) {
  process.stderr.write(`npm/pack.js: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { platforms: platforms.map((p) => p.go).join(' ') };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!['version', 'dist', 'out', 'platforms'].includes(key) || i + 1 >= argv.length) {
      fail(`usage: node npm/pack.js --version V --dist DIR --out DIR [--platforms "os/arch ..."] (bad argument ${argv[i]})`);
    }
    opts[key] = argv[i + 1];
  }
  for (const k of ['version', 'dist', 'out']) if (!opts[k]) fail(`--${k} is required`);
  if (!semver.test(opts.version)) fail(`--version ${JSON.stringify(opts.version)} is not a semantic version (x.y.z)`);
  return opts;
}

function selectPlatforms(list) {
  return list.split(/\s+/).filter(Boolean).map((go) => {
    const p = platforms.find((e) => e.go === go);
    if (!p) fail(`platform ${go} is not in npm/slivingdoc/lib/platforms.js`);
    return p;
  });
}

function writeJSON(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

function copyTree(from, to) {
  fs.cpSync(from, to, { recursive: true });
}

/** `npm pack` dir into out; returns the tarball's file name. */
function npmPack(dir, out) {
  const json = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
    cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(json)[0].filename;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const version = opts.version;
  const dist = path.resolve(opts.dist);
  const out = path.resolve(opts.out);
  const sumsFile = path.join(dist, 'SHA256SUMS');
  let sums;
  try {
    sums = readSums(sumsFile);
  } catch (err) {
    fail(`${sumsFile}: ${err.message} (run \`make release VERSION=${version}\` first)`);
  }

  // Check everything before writing anything: a refusal leaves no tarball.
  const selected = selectPlatforms(opts.platforms).map((p) => {
    const asset = assetName(p, version);
    const src = path.join(dist, asset);
    if (!sums.has(asset)) fail(`${asset} is not listed in ${sumsFile}`);
    if (!fs.existsSync(src)) fail(`${src} is missing (run \`make release VERSION=${version}\` first)`);
    const digest = crypto.createHash('sha256').update(fs.readFileSync(src)).digest('hex');
    if (digest !== sums.get(asset)) fail(`${src} does not match its SHA256SUMS entry`);
    return { p, src };
  });

  fs.rmSync(out, { recursive: true, force: true });
  const stage = path.join(out, 'stage');
  fs.mkdirSync(stage, { recursive: true });
  const tarballs = [];

  for (const { p, src } of selected) {
    const dir = path.join(stage, p.node);
    copyTree(path.join(__dirname, 'platform'), dir);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    manifest.name = packageName(p);
    manifest.version = version;
    manifest.description = manifest.description.replace('PLATFORM', p.node);
    manifest.os = [p.os];
    manifest.cpu = [p.cpu];
    writeJSON(path.join(dir, 'package.json'), manifest);
    const bin = path.join(dir, binaryPath(p));
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    fs.copyFileSync(src, bin);
    fs.chmodSync(bin, 0o755);
    tarballs.push(npmPack(dir, out));
  }

  const launcher = path.join(stage, 'slivingdoc');
  copyTree(path.join(__dirname, 'slivingdoc'), launcher);
  const manifest = JSON.parse(fs.readFileSync(path.join(launcher, 'package.json'), 'utf8'));
  manifest.version = version;
  // Exact pins: the launcher's SHA256SUMS vouch for this version's binaries only.
  manifest.optionalDependencies = Object.fromEntries(platforms.map((p) => [packageName(p), version]));
  writeJSON(path.join(launcher, 'package.json'), manifest);
  fs.copyFileSync(sumsFile, path.join(launcher, 'SHA256SUMS'));
  tarballs.push(npmPack(launcher, out));

  for (const t of tarballs) process.stdout.write(path.join(out, t) + '\n');
}

main();
