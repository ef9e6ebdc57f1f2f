import * as assert from 'node:assert/strict';
import { SessionRegistry } from '../../../../extension/src/debug/sessions';
import { Emitter, fakeSession } from './fakes';
import type * as vscode from 'vscode';

const parentA = fakeSession({ type: 'rankdebug', request: 'launch', name: 'job A' });
const parentB = fakeSession({ type: 'rankdebug', request: 'launch', name: 'job B' });

function rankSession(rank: number, parent?: vscode.DebugSession): vscode.DebugSession {
    return fakeSession({ type: 'rankdebug', request: 'attach', name: `rank ${rank}`, __rank: { rank } }, parent);
}

describe('debug/sessions', () => {
    it('keeps one child per parent and rank', () => {
        const registry = new SessionRegistry();
        const a1 = rankSession(1, parentA);
        const b1 = rankSession(1, parentB);
        registry.add(parentA, 1, a1);
        registry.add(parentB, 1, b1);
        assert.equal(registry.find(parentA, 1), a1);
        assert.equal(registry.find(parentB, 1), b1);
        assert.equal(registry.find(parentA, 2), undefined);
        registry.remove(parentA, 1);
        assert.equal(registry.find(parentA, 1), undefined);
        assert.equal(registry.find(parentB, 1), b1, "another parent's rank stays");
    });

    it('follows rank sessions as VS Code starts and ends them, until disposed', () => {
        const started = new Emitter<vscode.DebugSession>();
        const ended = new Emitter<vscode.DebugSession>();
        const registry = new SessionRegistry();
        const tracking = registry.track({ onDidStartDebugSession: started.event, onDidTerminateDebugSession: ended.event });
        const child = rankSession(3, parentA);
        started.fire(child);
        assert.equal(registry.find(parentA, 3), child);
        ended.fire(child);
        assert.equal(registry.find(parentA, 3), undefined);

        tracking.dispose();
        started.fire(rankSession(4, parentA));
        assert.equal(registry.find(parentA, 4), undefined);
    });

    it('leaves out sessions that are not a parent\'s rank', () => {
        const registry = new SessionRegistry();
        registry.started(rankSession(0));
        registry.started(fakeSession({ type: 'rankdebug', request: 'attach', name: 'rank 0' }, parentA));
        assert.equal(registry.find(parentA, 0), undefined);
        const child = rankSession(0, parentA);
        registry.started(child);
        registry.ended(fakeSession({ type: 'rankdebug', request: 'attach', name: 'other' }, parentA));
        assert.equal(registry.find(parentA, 0), child, 'only that rank ending removes it');
    });
});
