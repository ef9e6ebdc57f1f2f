import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { commandLine, controlSocket, ControlError, readReply, sendControl } from '../../../../extension/src/core/control';
import { l10n } from '../debug/fakes';

/**
 * A stand-in for the supervisor's control socket: a real Unix socket server (0600) that records
 * each command line and answers with `answer(command)`; `undefined` answers nothing, `'close'`
 * hangs up.
 */
class FakeSupervisor {
    readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-ctl-'));
    readonly socket = controlSocket(this.dir);
    readonly received: Record<string, unknown>[] = [];
    private readonly server: net.Server;

    constructor(private readonly answer: (cmd: Record<string, unknown>) => string | undefined) {
        this.server = net.createServer((conn) => {
            let buffer = '';
            conn.setEncoding('utf8');
            conn.on('data', (chunk: string) => {
                buffer += chunk;
                let end: number;
                while ((end = buffer.indexOf('\n')) >= 0) {
                    const cmd = JSON.parse(buffer.slice(0, end)) as Record<string, unknown>;
                    buffer = buffer.slice(end + 1);
                    this.received.push(cmd);
                    const reply = this.answer(cmd);
                    if (reply === 'close') conn.end();
                    else if (reply !== undefined) this.writeSplit(conn, reply);
                }
            });
        });
    }

    /** Writes the reply in two chunks, as a socket may deliver it. */
    private writeSplit(conn: net.Socket, reply: string): void {
        const line = `${reply}\n`;
        const half = Math.floor(line.length / 2);
        conn.write(line.slice(0, half));
        setTimeout(() => conn.write(line.slice(half)), 5);
    }

    listen(): Promise<void> {
        return new Promise((resolve) =>
            this.server.listen(this.socket, () => {
                fs.chmodSync(this.socket, 0o600);
                resolve();
            }),
        );
    }

    close(): Promise<void> {
        return new Promise((resolve) => this.server.close(() => {
            fs.rmSync(this.dir, { recursive: true, force: true });
            resolve();
        }));
    }
}

describe('core/control', () => {
    let sup: FakeSupervisor | undefined;
    afterEach(async () => {
        await sup?.close();
        sup = undefined;
    });

    it('writes one JSON line per command, leaving out ranks that mean every chosen rank', () => {
        assert.equal(commandLine({ command: 'continue' }), '{"command":"continue"}\n');
        assert.equal(commandLine({ command: 'continue', ranks: undefined }), '{"command":"continue"}\n');
        assert.equal(commandLine({ command: 'step', ranks: [1, 3], kind: 'over' }), '{"command":"step","ranks":[1,3],"kind":"over"}\n');
        assert.equal(commandLine({ command: 'run-to', ranks: '0-3', file: '/w/train.py', line: 30 }), '{"command":"run-to","ranks":"0-3","file":"/w/train.py","line":30}\n');
        assert.equal(commandLine({ command: 'stop-mode', mode: 'alone' }), '{"command":"stop-mode","mode":"alone"}\n');
    });

    it('reads ok and error replies', () => {
        assert.deepEqual(readReply('{"ok": true, "ranks": [0, 1, 3]}', l10n), { ranks: [0, 1, 3] });
        assert.deepEqual(readReply('{"ok": true}', l10n), { ranks: [] });
        assert.throws(() => readReply('{"error": {"message": "rank 9 is outside the job"}}', l10n), (e: unknown) => e instanceof ControlError && e.message === 'rank 9 is outside the job');
        assert.throws(() => readReply('not json', l10n), /unreadable: not json/);
        assert.throws(() => readReply('{"ok": false}', l10n), /unreadable/);
    });

    it('sends a command over a real Unix socket and returns the ranks acted on', async () => {
        sup = new FakeSupervisor((cmd) => JSON.stringify({ ok: true, ranks: cmd.ranks ?? [0, 1, 2, 3] }));
        await sup.listen();
        assert.equal(fs.statSync(sup.socket).mode & 0o777, 0o600);
        assert.deepEqual(await sendControl(sup.socket, { command: 'pause' }, l10n), { ranks: [0, 1, 2, 3] });
        assert.deepEqual(await sendControl(sup.socket, { command: 'step', ranks: [1, 3], kind: 'in' }, l10n), { ranks: [1, 3] });
        assert.deepEqual(sup.received, [{ command: 'pause' }, { command: 'step', ranks: [1, 3], kind: 'in' }]);
    });

    it('gives the supervisor\'s error message', async () => {
        sup = new FakeSupervisor(() => JSON.stringify({ error: { message: 'no rank of 5-7 is chosen' } }));
        await sup.listen();
        await assert.rejects(sendControl(sup.socket, { command: 'continue', ranks: '5-7' }, l10n), (e: unknown) => e instanceof ControlError && e.message === 'no rank of 5-7 is chosen');
    });

    it('says clearly when no supervisor listens, when it hangs up, and when it stays silent', async () => {
        const missing = controlSocket(path.join(os.tmpdir(), 'rankdebug-no-such-job'));
        await assert.rejects(sendControl(missing, { command: 'continue' }, l10n), (e: unknown) => e instanceof ControlError && /takes no commands .*ctl\.sock/.test(e.message));
        sup = new FakeSupervisor((cmd) => (cmd.command === 'pause' ? 'close' : undefined));
        await sup.listen();
        await assert.rejects(sendControl(sup.socket, { command: 'pause' }, l10n), /closed its control connection without an answer/);
        const t0 = Date.now();
        await assert.rejects(sendControl(sup.socket, { command: 'continue' }, l10n, 200), /did not answer within 0.2 s/);
        assert.ok(Date.now() - t0 < 2000);
    });
});
