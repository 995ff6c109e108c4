#!/usr/bin/env node
'use strict';

// `npx slivingdoc <command>`: runs the verified native binary (lib/launch.js).
require('../lib/launch').main(process.argv.slice(2));
