import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { Server } from '../../../../extension/src/common/server';
import type { TerminalHost } from '../../../../extension/src/launch/host';
import { TerminalJobs } from '../../../../extension/src/launch/terminalJobs';
import type { Context } from '../../../../extension/src/launch/trainingCommand';
import { Emitter } from '../debug/fakes';
import { FakeRoomHost } from '../jobs/fakes';
import { tick } from './fakes';

/** The terminals' environment as the shim sets it: every change, in order. */
class FakeEnv {
    persistent = true;
    description: string | vscode.MarkdownString | undefined;
    readonly changes: string[] = [];
    clear(): void {
        this.changes.push('clear');
    }
    prepend(name: string, value: string): void {
        this.changes.push(`prepend ${name}=${value}`);
    }
    replace(name: string, value: string): void {
        this.changes.push(`replace ${name}=${value}`);
    }
}

class FakeTerminalHost extends FakeRoomHost implements TerminalHost {
    readonly env = new FakeEnv() as unknown as TerminalHost['env'];
    readonly storage = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-terminal-'));
    readonly ended = new Emitter<vscode.TerminalShellExecutionEndEvent>();
    readonly onDidEndTerminalShellExecution = this.ended.event;
    readonly contexts: string[] = [];
    readonly asked: string[] = [];
    answer: string | undefined;
    readonly sessions: vscode.DebugConfiguration[] = [];
    readonly debugged: { args: unknown[]; options: { alwaysPick?: boolean } }[] = [];

    folder(): vscode.WorkspaceFolder | undefined {
        return undefined;
    }
    startDebugging(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Thenable<boolean> {
        this.sessions.push(config);
        return Promise.resolve(true);
    }
    ask(message: string): Thenable<string | undefined> {
        this.asked.push(message);
        return Promise.resolve(this.answer);
    }
    setContext(key: string, value: unknown): void {
        this.contexts.push(`${key}=${String(value)}`);
    }
    mainScript(): string {
        return '/ext/extension/python/rankdebug_main.py';
    }
    debugCommand(_ctx: Context, args: unknown[], options: { alwaysPick?: boolean }): Promise<boolean> {
        this.debugged.push({ args, options });
        return Promise.resolve(true);
    }
    get changes(): string[] {
        return (this.env as unknown as FakeEnv).changes;
    }
}

const PLAN = { launcher: 'torchrun', title: 'train.py', entry: { kind: 'script', target: 'train.py' } };

/** The language server answering `rankdebug.plan` with `plan` for every text; the texts asked. */
function context(plan: unknown = PLAN): { ctx: Context; planned: unknown[] } {
    const planned: unknown[] = [];
    const server = { execute: (_command: string, arg: unknown) => (planned.push(arg), Promise.resolve(plan)) } as unknown as Server;
    return { ctx: { server } as Context, planned };
}

/** A command that ended in a terminal with shell integration. */
function ended(commandLine: string, exitCode: number | undefined, cwd = '/runs'): vscode.TerminalShellExecutionEndEvent {
    return { exitCode, execution: { commandLine: { value: commandLine }, cwd: { fsPath: cwd } }, terminal: {} } as unknown as vscode.TerminalShellExecutionEndEvent;
}

async function until(what: string, ok: () => boolean, ms = 1500): Promise<void> {
    const end = Date.now() + ms;
    while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await tick(10);
    }
}

describe('launch/terminalJobs', () => {
    const made: TerminalJobs[] = [];
    const make = (host: FakeTerminalHost, ctx = context().ctx): TerminalJobs => {
        const t = new TerminalJobs(host, ctx);
        made.push(t);
        return t;
    };
    afterEach(() => {
        for (const t of made.splice(0)) t.dispose();
    });

    it("puts the rankdebug shim on the terminals' PATH with the interpreter, the CLI and a private endpoints folder", async () => {
        const host = new FakeTerminalHost();
        const t = make(host);
        await t.updateShim('/venv/bin/python');
        const shim = path.join(host.storage, 'bin', 'rankdebug');
        assert.equal(fs.statSync(shim).mode & 0o777, 0o755);
        assert.match(fs.readFileSync(shim, 'utf8'), /RANKDEBUG_ENDPOINTS/);
        assert.equal(fs.statSync(t.endpoints).mode & 0o777, 0o700);
        assert.equal(host.env.persistent, false, 'the endpoints folder belongs to this extension host');
        assert.deepEqual(host.changes, [
            'clear',
            `prepend PATH=${path.join(host.storage, 'bin')}${path.delimiter}`,
            'replace RANKDEBUG_PYTHON=/venv/bin/python',
            'replace RANKDEBUG_MAIN=/ext/extension/python/rankdebug_main.py',
            `replace RANKDEBUG_ENDPOINTS=${t.endpoints}`,
        ]);
        host.settingsNow = { ...host.settingsNow, terminalShim: false };
        await t.updateShim('/venv/bin/python');
        assert.deepEqual(host.changes.slice(5), ['clear'], 'off: the terminals are left as they were');
    });

    it('attaches to a job the shim started as soon as its events name it, once, and says an error', async () => {
        const host = new FakeTerminalHost();
        const t = make(host);
        await t.updateShim('/venv/bin/python');
        const events = path.join(t.endpoints, 'job-1.jsonl');
        fs.writeFileSync(events, `${JSON.stringify({ event: 'job', job: 'J7', pid: 4242, dir: '/run/rankdebug/J7' })}\n`);
        await until('the session', () => host.sessions.length > 0);
        assert.deepEqual(host.sessions[0], {
            type: 'rankdebug',
            request: 'attach',
            name: 'terminal job J7',
            __attach: { job: 'J7', supervisorPid: 4242, dir: '/run/rankdebug/J7', ranks: [], events, stopJobOnEnd: true, title: 'J7' },
        });
        fs.appendFileSync(events, `${JSON.stringify({ event: 'listening', rank: 0, host: '127.0.0.1', port: 5678 })}\n`);
        fs.writeFileSync(path.join(t.endpoints, 'job-2.jsonl'), `${JSON.stringify({ error: { message: 'torchrun was not found' } })}\n`);
        await until('the error', () => host.errors.length > 0);
        await tick(100);
        assert.equal(host.sessions.length, 1);
        assert.deepEqual(host.errors, ['Rank Debugger: torchrun was not found']);
    });

    it('remembers a training command run in a terminal, and offers to debug it when it failed', async () => {
        const host = new FakeTerminalHost();
        const { ctx, planned } = context();
        const t = make(host, ctx);
        host.answer = 'Debug It';
        host.ended.fire(ended('torchrun --nproc_per_node 2 train.py', 1));
        await until('the offer', () => host.debugged.length > 0);
        assert.deepEqual(planned, [{ text: 'torchrun --nproc_per_node 2 train.py', language: 'shellscript', settings: { cwd: '/runs' } }]);
        assert.deepEqual(t.last, { text: 'torchrun --nproc_per_node 2 train.py', cwd: '/runs', exitCode: 1 });
        assert.deepEqual(host.contexts, ['rankdebug.hasLastCommand=true']);
        assert.deepEqual(host.asked, ['train.py exited with code 1. Debug it with Rank Debugger?']);
        assert.deepEqual(host.debugged, [{ args: [{ text: 'torchrun --nproc_per_node 2 train.py', cwd: '/runs' }], options: { alwaysPick: true } }]);
    });

    it('offers nothing for a success, an interrupt, with the setting off, or for a command that is no training job', async () => {
        const host = new FakeTerminalHost();
        const { ctx, planned } = context();
        const t = make(host, ctx);
        host.ended.fire(ended('torchrun train.py', 0));
        host.ended.fire(ended('torchrun train.py', 130));
        await tick(20);
        host.settingsNow = { ...host.settingsNow, offerDebugOnFailure: false };
        host.ended.fire(ended('torchrun train.py', 1));
        host.ended.fire(ended('git status', 1));
        host.ended.fire(ended('rankdebug torchrun train.py', 1));
        await tick(20);
        assert.deepEqual(host.asked, []);
        assert.equal(planned.length, 3, 'git and rankdebug itself are not planned');
        assert.equal(t.last?.exitCode, 1);
        const other = new FakeTerminalHost();
        const notPython = make(other, context({ launcher: 'python', entry: { kind: 'cli', target: 'pip' } }).ctx);
        other.ended.fire(ended('python -m pip install x', 1));
        await tick(20);
        assert.equal(notPython.last, undefined);
        assert.deepEqual(other.contexts, []);
    });

    it('debugs the last training command, and says when there is none yet', async () => {
        const host = new FakeTerminalHost();
        const t = make(host);
        await t.debugLast();
        assert.deepEqual(host.infos, ['No training command has run in a terminal with shell integration yet. Run one, or use Debug Training Command.']);
        t.last = { text: 'torchrun train.py', cwd: '/runs' };
        await t.debugLast();
        assert.deepEqual(host.debugged, [{ args: [{ text: 'torchrun train.py', cwd: '/runs' }], options: { alwaysPick: true } }]);
    });
});
