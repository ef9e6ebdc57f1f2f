import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI_VERBS, join, quote, shimScript } from '../../../../extension/src/core/shell';
import { logicalLine, looksLikeLaunch } from '../../../../extension/src/core/lineHint';

describe('core/shell', () => {
    it('quotes words for a POSIX shell', () => {
        assert.equal(quote('train.py'), 'train.py');
        assert.equal(quote('--lr=1e-4'), '--lr=1e-4');
        assert.equal(quote(''), "''");
        assert.equal(quote('a b'), "'a b'");
        assert.equal(quote("it's"), "'it'\\''s'");
        assert.equal(quote('$(rm -rf ~)'), "'$(rm -rf ~)'");
    });

    it('joins argv so that sh reads back the same words', () => {
        const argv = ['printf', '%s|', 'a b', "it's", '$HOME', '`x`', '"q"', ''];
        const out = execFileSync('sh', ['-c', join(argv)], { encoding: 'utf8' });
        assert.equal(out, argv.slice(2).map((w) => `${w}|`).join(''));
    });

    describe('the terminal shim', () => {
        let dir: string;
        let shim: string;
        let fake: string;
        beforeEach(() => {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-shim-'));
            shim = path.join(dir, 'rankdebug');
            fs.writeFileSync(shim, shimScript(), { mode: 0o755 });
            // A fake CLI that prints its arguments one per line, as `rankdebug launch --json` would write events.
            fake = path.join(dir, 'main.sh');
            fs.writeFileSync(fake, '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n', { mode: 0o755 });
            fs.mkdirSync(path.join(dir, 'ep'));
        });
        afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
        const run = (args: string[], env: Record<string, string> = {}): string =>
            execFileSync(shim, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', RANKDEBUG_PYTHON: 'sh', RANKDEBUG_MAIN: fake, ...env } });

        it('passes the CLI verbs through', () => {
            assert.equal(run(['plan', '--json', '--', 'torchrun', 'x.py']), 'plan\n--json\n--\ntorchrun\nx.py\n');
        });

        it('passes every verb and --version through, never as a training command', () => {
            for (const verb of [...CLI_VERBS, '--version']) {
                assert.equal(run([verb, 'x']), `${verb}\nx\n`, verb);
            }
        });

        it('runs a training command under launch --json, events into the endpoints folder', () => {
            run(['--ranks', '1,3', 'torchrun', '--nproc_per_node', '4', 'a b.py'], { RANKDEBUG_ENDPOINTS: path.join(dir, 'ep') });
            const files = fs.readdirSync(path.join(dir, 'ep'));
            assert.equal(files.length, 1);
            assert.ok(files[0].endsWith('.jsonl'));
            const args = fs.readFileSync(path.join(dir, 'ep', files[0]), 'utf8').split('\n');
            assert.deepEqual(args.slice(0, 9), ['launch', '--json', '--ranks', '1,3', '--', 'torchrun', '--nproc_per_node', '4', 'a b.py']);
        });

        it('defaults to RANKDEBUG_RANKS, else rank 0', () => {
            run(['torchrun', 'x.py'], { RANKDEBUG_ENDPOINTS: path.join(dir, 'ep'), RANKDEBUG_RANKS: 'all' });
            const f = fs.readdirSync(path.join(dir, 'ep'))[0];
            assert.ok(fs.readFileSync(path.join(dir, 'ep', f), 'utf8').startsWith('launch\n--json\n--ranks\nall\n'));
        });

        it('refuses to run outside a VS Code terminal', () => {
            assert.throws(() => run(['torchrun', 'x.py']), /status 2|exit code 2|Command failed/);
        });
    });
});

describe('core/lineHint', () => {
    const script = ['#!/bin/bash', 'export X=1', 'CUDA_VISIBLE_DEVICES=0,1 torchrun \\', '    --nproc_per_node 2 \\', '    train.py', 'echo done', '# torchrun in a comment'];

    it('joins continuation lines', () => {
        assert.equal(logicalLine(script, 3), 'CUDA_VISIBLE_DEVICES=0,1 torchrun \\     --nproc_per_node 2 \\     train.py');
    });

    it('finds launch commands on any of their lines, not elsewhere', () => {
        assert.ok(looksLikeLaunch(script, 2));
        assert.ok(looksLikeLaunch(script, 4));
        assert.ok(!looksLikeLaunch(script, 1));
        assert.ok(!looksLikeLaunch(script, 5));
        assert.ok(!looksLikeLaunch(script, 6));
        assert.ok(looksLikeLaunch(['$ deepspeed --num_gpus 8 train.py'], 0));
        assert.ok(looksLikeLaunch(['accelerate launch train.py'], 0));
        assert.ok(looksLikeLaunch(['tune run --nproc_per_node 2 full_finetune_distributed --config c'], 0));
        assert.ok(looksLikeLaunch(['uv run litgpt finetune_lora --devices 2'], 0));
        assert.ok(!looksLikeLaunch(['echo tuned'], 0));
    });
});

describe('core/lineHint words from the launcher table', () => {
    it('offers the menu on every launcher program the Python side knows, and no near miss', () => {
        // The words are generated from rankdebug.launcher_table (scripts/gen_wire.py).
        for (const line of ['accelerate-launch --num_processes 2 t.py x', 'mpiexec.hydra -n 4 ./a', 'orterun -np 2 a', 'prterun -np 2 a', 'xtuner train cfg', 'composer -n 8 t', 'sbatch job.sh']) {
            assert.ok(looksLikeLaunch([line], 0), line);
        }
        for (const line of ['mpiexecXhydra -n 4 ./a', 'torchrunner x', 'echo done']) {
            assert.ok(!looksLikeLaunch([line], 0), line);
        }
    });
});
