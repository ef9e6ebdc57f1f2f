import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { runTypedPick, type Answer, type TypedPickSpec } from '../../../../extension/src/core/typedPick';
import { FakeQuickPick, tick } from '../launch/fakes';

const DELAY = 5;

/** A pick whose hints and answers the test sets; what it was asked, recorded. */
function start(spec: Partial<TypedPickSpec<string>> = {}): { qp: FakeQuickPick<vscode.QuickPickItem>; answer: Promise<string | undefined>; hinted: string[] } {
    const qp = new FakeQuickPick<vscode.QuickPickItem>();
    const hinted: string[] = [];
    const answer = runTypedPick(qp, {
        title: 'Which ranks?',
        delayMs: DELAY,
        hint: async (text) => {
            hinted.push(text);
            return `Enter: ranks ${text}`;
        },
        accept: () => undefined,
        ...spec,
    });
    return { qp, answer, hinted };
}

describe('core/typedPick', () => {
    it('shows the pick with its title, and says what Enter takes for the text typed last', async () => {
        const { qp, hinted } = start();
        assert.ok(qp.shown);
        assert.equal(qp.title, 'Which ranks?');
        qp.type('1');
        qp.type('1,3');
        await tick(DELAY * 4);
        assert.deepEqual(hinted, ['1,3'], 'a text overtaken by the next one is not checked');
        assert.equal(qp.title, 'Which ranks? — Enter: ranks 1,3');
        qp.type('   ');
        await tick(DELAY * 4);
        assert.deepEqual(hinted, ['1,3'], 'blank text is not checked');
        assert.equal(qp.title, 'Which ranks?');
    });

    it('drops a hint for text no longer typed, a failed check, and any hint once hidden', async () => {
        let release: (words: string) => void = () => undefined;
        const { qp, answer } = start({ hint: (text) => (text === 'slow' ? new Promise((r) => (release = r)) : Promise.reject(new Error('server gone'))) });
        qp.type('slow');
        await tick(DELAY * 4);
        qp.type('x');
        release('Enter: ranks 7');
        await tick(DELAY * 4);
        assert.equal(qp.title, 'Which ranks?', 'the slow answer was for an older text, and the check of x failed');
        qp.type('slow');
        await tick(DELAY * 4);
        qp.escape();
        release('Enter: ranks 7');
        await tick();
        assert.equal(qp.title, 'Which ranks?');
        assert.equal(await answer, undefined);
        assert.ok(qp.disposed);
    });

    it('closes with what Enter takes; stays open, saying why, when Enter takes words or nothing', async () => {
        const answers: Answer<string>[] = [undefined, { say: 'rank 9 is outside the job' }, { take: '1,3' }];
        const { qp, answer } = start({ accept: () => answers.shift() });
        await qp.enter();
        assert.equal(qp.hidden, false);
        assert.equal(qp.title, 'Which ranks?');
        await qp.enter();
        assert.equal(qp.hidden, false);
        assert.equal(qp.title, 'Which ranks? — rank 9 is outside the job');
        assert.equal(qp.wasBusy, false, 'an answer at once does not mark the pick busy');
        await qp.enter();
        assert.equal(await answer, '1,3');
        assert.ok(qp.hidden && qp.disposed);
    });

    it('is busy while an answer is awaited, and takes one Enter at a time', async () => {
        let calls = 0;
        let resolve: (a: Answer<string>) => void = () => undefined;
        const { qp, answer } = start({
            accept: () => {
                calls += 1;
                return new Promise<Answer<string>>((r) => (resolve = r));
            },
        });
        await qp.enter();
        assert.equal(qp.busy, true);
        await qp.enter();
        assert.equal(calls, 1, 'a second Enter while the first is answered is ignored');
        resolve({ take: 'all' });
        assert.equal(await answer, 'all');
        assert.equal(qp.busy, false);
    });

    it('says a failed answer in the title and stays open for another Enter', async () => {
        let fail = true;
        const { qp, answer } = start({
            accept: () => {
                if (fail) return Promise.reject(new Error('the language server is not running'));
                return { take: '0' };
            },
        });
        await qp.enter();
        assert.equal(qp.title, 'Which ranks? — the language server is not running');
        assert.equal(qp.busy, false);
        fail = false;
        await qp.enter();
        assert.equal(await answer, '0');
    });
});
