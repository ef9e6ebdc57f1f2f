// Bundles the extension into dist/extension.js (one file, `vscode` external).
//   node extension/esbuild.mjs [--production] [--watch] [--tests]
// --tests also bundles each unit test (tests/extension/unit/**/*.test.ts) into out/unit/ for mocha.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');

const common = {
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    // jsonc-parser's UMD entry requires its parts dynamically; its ESM entry bundles.
    mainFields: ['module', 'main'],
    external: ['vscode'],
    logLevel: 'warning',
    sourcemap: !production,
    minify: production,
};

const builds = [{ ...common, entryPoints: ['extension/src/extension.ts'], outfile: 'dist/extension.js' }];
if (tests) {
    const dir = 'tests/extension/unit';
    // Tests mirror the source tree (unit/debug/ for src/debug/): every *.test.ts below, kept
    // at its relative path under out/unit/.
    const entryPoints = readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => `${dir}/${f}`);
    builds.push({ ...common, entryPoints, outdir: 'out/unit', outbase: dir, sourcemap: 'inline' });
    const vdir = 'tests/extension/vscode';
    const vscodeTests = readdirSync(vdir).filter((f) => f.endsWith('.test.ts')).map((f) => `${vdir}/${f}`);
    builds.push({ ...common, entryPoints: vscodeTests, outdir: 'out/vscode', sourcemap: 'inline' });
}

for (const options of builds) {
    if (watch) {
        const ctx = await esbuild.context(options);
        await ctx.watch();
    } else {
        await esbuild.build(options);
    }
}
