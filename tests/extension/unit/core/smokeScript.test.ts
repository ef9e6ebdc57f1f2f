import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { commandLine, commandText, originalScript, parseSmoke, smokeScript } from '../../../../extension/src/core/smokeScript';

/** Runs a script with bash, a stub `torchrun` first on PATH that prints its cwd, argv and one variable as JSON. */
function runWithStub(script: string): { cwd: string; argv: string[]; wandb: string | null } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smoke-unit-'));
    const stub = path.join(dir, 'torchrun');
    fs.writeFileSync(stub, '#!/usr/bin/env python3\nimport json, os, sys\nprint(json.dumps({"cwd": os.getcwd(), "argv": sys.argv[1:], "wandb": os.environ.get("WANDB_MODE")}))\n', { mode: 0o755 });
    const file = path.join(dir, 'x.smoke.sh');
    fs.writeFileSync(file, script);
    const out = execFileSync('bash', [file], { env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` }, encoding: 'utf8' });
    fs.rmSync(dir, { recursive: true, force: true });
    return JSON.parse(out) as { cwd: string; argv: string[]; wandb: string | null };
}

const ANSWER = {
    argv: ['torchrun', '--nproc_per_node', '2', 'train.py', '--max_steps', '3', '--run_name', "it's $(rm -rf ~)", 'data.max_prompt_length=512'],
    env: { WANDB_MODE: 'disabled' },
    changes: [
        { name: 'max_steps', from: null, to: 3, why: 'a few optimizer steps', where: '--max_steps' },
        { name: 'data.max_prompt_length', from: 10240, to: 512, why: 'short sequences', where: 'data.max_prompt_length' },
    ],
    files: ['/tmp/copy/ds_config.json'],
    original: { argv: ['torchrun', '--nproc_per_node', '8', 'train.py', '--run_name', "it's $(rm -rf ~)", 'data.max_prompt_length=10240'], env: {} },
    notes: ['no save interval found'],
    missing: ['no step limit found: the run may be long'],
};

describe('core/smokeScript', () => {
    it('reads the smoke contract and refuses an answer without a command', () => {
        const s = parseSmoke(ANSWER);
        assert.deepEqual(s.argv, ANSWER.argv);
        assert.equal(s.changes.length, 2);
        assert.equal(s.changes[1].where, 'data.max_prompt_length');
        assert.deepEqual(s.files, ['/tmp/copy/ds_config.json']);
        assert.deepEqual(s.notes, ['no step limit found: the run may be long', 'no save interval found']);
        assert.deepEqual(s.original.argv, ANSWER.original.argv);
        assert.throws(() => parseSmoke({ env: {}, changes: [] }), /no command/);
        assert.throws(() => parseSmoke({ argv: [] }), /no command/);
        assert.throws(() => parseSmoke({ ...ANSWER, original: undefined }), /no original command/);
        assert.deepEqual(parseSmoke({ argv: ['python', 'a.py'], original: { argv: ['python', 'a.py'] }, changes: 'junk', env: { A: 1 } }).changes, []);
        assert.equal(parseSmoke({ ...ANSWER, plan: { cwd: '/w/sub' } }).cwd, '/w/sub');
    });

    it('writes a smoke script that bash runs as exactly the smoke command, in the command\'s directory', () => {
        const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'smoke cwd '));
        const script = smokeScript(parseSmoke(ANSWER), { label: 'train.sh:5', cwd });
        const seen = runWithStub(script);
        assert.deepEqual(seen.argv, ANSWER.argv.slice(1));
        assert.equal(seen.wandb, 'disabled');
        assert.equal(fs.realpathSync(seen.cwd), fs.realpathSync(cwd));
        assert.match(script, /# {3}data\.max_prompt_length {2}10240 → 512 {2}short sequences\n/);
        assert.match(script, /# {3}max_steps +\(unset\) → 3 +a few optimizer steps\n/);
        assert.match(script, /! no save interval found/);
        assert.match(script, /config copy: \/tmp\/copy\/ds_config\.json/);
        fs.rmSync(cwd, { recursive: true, force: true });
    });

    it('lays out both sides alike, one option per line, so the diff shows the changed flags', () => {
        const s = parseSmoke(ANSWER);
        const right = smokeScript(s, { label: 'train.sh:5', cwd: '/w' }).split('\n');
        const left = originalScript(s, { label: 'train.sh:5', cwd: '/w' }).split('\n');
        assert.ok(left.includes('    --nproc_per_node 8 \\'));
        assert.ok(right.includes('    --nproc_per_node 2 \\'));
        assert.ok(right.includes('    --max_steps 3 \\'));
        assert.ok(left.includes('    train.py \\') && right.includes('    train.py \\'));
        assert.ok(left.includes('    data.max_prompt_length=10240'));
        assert.deepEqual(commandText(['python', '-m', 'x'], {}, undefined), ['python \\', '    -m x']);
    });

    it('finds the command line of a smoke script, after comments, cd and exports', () => {
        const script = smokeScript(parseSmoke(ANSWER), { label: 'train.sh:5', cwd: '/w' });
        const line = commandLine(script);
        assert.ok(line !== undefined);
        assert.match(script.split('\n')[line], /^torchrun \\$/);
        assert.equal(commandLine('# only\n\ncd /x\nexport A=1\n'), undefined);
    });
});
