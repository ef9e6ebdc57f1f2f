import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import type { CheckRanksArgs } from '../../../../extension/src/core/rankCheck';
import { BreakpointBinding } from '../../../../extension/src/groups/breakpointBinding';
import type { BindHost, LineBreakpoint } from '../../../../extension/src/groups/host';
import { CHECK_DELAY_MS } from '../../../../extension/src/core/rankCheck';
import { fakeChecks, ranksReply } from '../launch/fakes';
import { FakeGroupsHost, FakeJobState, fileUri, tracked } from './fakes';

/** The breakpoints of the window, per `file:line` (0-based), replaced as the binding asks. */
class FakeBindHost extends FakeGroupsHost implements BindHost {
    readonly breakpoints = new Map<string, LineBreakpoint[]>();
    isUri(value: unknown): value is vscode.Uri {
        return typeof value === 'object' && value !== null && 'fsPath' in value;
    }
    breakpointsAt(uri: vscode.Uri, line: number): LineBreakpoint[] {
        return this.breakpoints.get(`${uri.fsPath}:${line}`) ?? [];
    }
    setBreakpoints(uri: vscode.Uri, line: number, breakpoints: readonly LineBreakpoint[]): void {
        this.breakpoints.set(`${uri.fsPath}:${line}`, [...breakpoints]);
    }
}

const TRAIN = fileUri('/w/train.py');

function binding(answers: Parameters<typeof fakeChecks>[0] = {}): { host: FakeBindHost; bind: BreakpointBinding; state: FakeJobState; asked: CheckRanksArgs[] } {
    const host = new FakeBindHost();
    const state = new FakeJobState();
    const { execute, asked } = fakeChecks({ '1,3': ranksReply([1, 3]), '0 - 3': ranksReply([0, 1, 2, 3], false, '0-3'), ...answers });
    return { host, state, asked, bind: new BreakpointBinding(host, execute, state.asState) };
}

describe('groups/breakpointBinding', () => {
    it("binds a new breakpoint on the line-number menu's line to the ranks typed, in the server's words", async () => {
        const { host, bind } = binding();
        host.inputs = ['0 - 3'];
        await bind.bind([{ lineNumber: 30, uri: TRAIN }]);
        assert.deepEqual(host.breakpoints.get('/w/train.py:29'), [{ enabled: true, condition: 'ranks 0-3', hitCondition: undefined, logMessage: undefined }]);
        assert.equal(host.inputBoxes[0].title, 'Bind the breakpoint at train.py:30 to ranks');
        assert.equal(host.inputBoxes[0].value, '');
        assert.deepEqual(host.status, ['$(debug-breakpoint-conditional) train.py:30: only ranks 0-3 stop here']);
    });

    it("keeps each breakpoint's own condition, hit count and log message, and offers its ranks to change", async () => {
        const { host, bind } = binding();
        host.breakpoints.set('/w/train.py:9', [
            { enabled: false, condition: 'ranks 2 and step > 3', hitCondition: '5' },
            { enabled: true, logMessage: 'at {step}' },
        ]);
        host.cursorAt = { uri: TRAIN, line: 9 };
        host.inputs = ['1,3'];
        await bind.bind([]);
        assert.equal(host.inputBoxes[0].value, '2');
        assert.deepEqual(host.breakpoints.get('/w/train.py:9'), [
            { enabled: false, condition: 'ranks 1,3 and step > 3', hitCondition: '5', logMessage: undefined },
            { enabled: true, condition: 'ranks 1,3', hitCondition: undefined, logMessage: 'at {step}' },
        ]);
    });

    it('unbinds with an empty text: every chosen rank stops there again', async () => {
        const { host, bind, asked } = binding();
        host.breakpoints.set('/w/train.py:9', [{ enabled: true, condition: 'ranks 1,3 and loss > 2' }]);
        host.cursorAt = { uri: TRAIN, line: 9 };
        host.inputs = [''];
        await bind.bind([]);
        assert.deepEqual(host.breakpoints.get('/w/train.py:9'), [{ enabled: true, condition: 'loss > 2', hitCondition: undefined, logMessage: undefined }]);
        assert.deepEqual(host.status, ['$(debug-breakpoint) train.py:10: every chosen rank stops here']);
        assert.deepEqual(asked, []);
    });

    it("changes nothing when cancelled or refused by the server, and says the server's word", async () => {
        const { host, bind } = binding({ '9': { error: { message: '--ranks: rank 9 is outside the job (world size 4)' } } });
        host.cursorAt = { uri: TRAIN, line: 9 };
        host.inputs = [undefined, '9'];
        await bind.bind([]);
        await bind.bind([]);
        assert.deepEqual(host.breakpoints, new Map());
        assert.deepEqual(host.errors, ['Rank Debugger: --ranks: rank 9 is outside the job (world size 4)']);
    });

    it('takes the text as typed when the server cannot answer', async () => {
        const { host, bind } = binding({ '2, 5': new Error('the language server is not running') });
        host.cursorAt = { uri: TRAIN, line: 0 };
        host.inputs = ['2, 5'];
        await bind.bind([]);
        assert.equal(host.breakpoints.get('/w/train.py:0')?.[0].condition, 'ranks 2,5');
        assert.match(host.logged.join('\n'), /warn: bind breakpoint: ranks not checked/);
    });

    it("checks the typed ranks against the job's size when exactly one job is debugged", async () => {
        const { host, bind, state, asked } = binding();
        state.jobs = [tracked('J1', '/run/j1', { worldSize: 4 })];
        host.cursorAt = { uri: TRAIN, line: 0 };
        host.inputs = ['1,3'];
        await bind.bind([]);
        assert.equal(asked[0].worldSize, 4);
        const validate = host.inputBoxes[0].validateInput;
        assert.ok(validate);
        const said = await Promise.race([validate('9'), new Promise((r) => setTimeout(() => r('slow'), CHECK_DELAY_MS * 4))]);
        assert.equal(said, 'not a rank choice: 9');
        state.jobs = [tracked('J1', '/run/j1', { worldSize: 4 }), tracked('J2', '/run/j2', { worldSize: 8 })];
        host.inputs = ['1,3'];
        await bind.bind([]);
        assert.equal(asked.at(-1)?.worldSize, null);
    });

    it('asks for a line first', async () => {
        const { host, bind } = binding();
        await bind.bind([]);
        assert.deepEqual(host.infos, ['Put the cursor on a line of a Python file first.']);
        assert.deepEqual(host.inputBoxes, []);
    });
});
