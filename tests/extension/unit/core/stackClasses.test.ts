import * as assert from 'node:assert/strict';
import { capClasses, classLabel } from '../../../../extension/src/core/classSessions';
import { classRep, stackClasses, toStacksView } from '../../../../extension/src/core/stacks';
import { renderStacks } from '../../../../extension/src/core/stacksHtml';
import { l10n } from '../debug/fakes';
import { NONCE, STACKS_LABELS } from '../fixtures';

const TRAIN = '/home/me/proj/train.py';
const fr = (name: string, line: number) => ({ name, file: TRAIN, line, library: false, short: `train.py:${line}` });
const group = (ranks: (number | null)[], main = true, odd = false) => ({ thread: main ? 'MainThread' : 'Thread-1', main, ranks, pids: ranks.map((r, i) => 100 + (r ?? 50 + i)), odd, frames: [fr('main', 10)] });

/** 256 ranks: 0-251 and 253 in all_reduce, 252 and 254-255 elsewhere, 254 odd; a helper thread group; a process with no rank. */
const many = Array.from({ length: 256 }, (_x, i) => i);
const ANSWER = {
    ranks: many.map((r) => ({ rank: r, pid: 100 + r })),
    groups: [
        group(many.filter((r) => r <= 251 || r === 253)),
        group([252, 255]),
        group([254], true, true),
        group(many, false),
        group([null]),
    ],
    odd: [254],
    tree: [
        {
            ...fr('main', 10),
            count: 256,
            ranks: many,
            children: [
                { ...fr('step', 20), count: 253, ranks: many.filter((r) => r !== 254 && r !== 255 && r !== 252).concat([]), children: [] },
                { ...fr('load', 30), count: 3, ranks: [252, 254, 255], children: [] },
            ],
        },
    ],
};

describe('one rank per stack class', () => {
    it('takes the odd one of a class, else its lowest rank, and counts the others it stands for', () => {
        assert.deepEqual(classRep([5, 3, 9, 3], []), { rank: 3, others: 2, odd: false });
        assert.deepEqual(classRep([5, 3, 9], [9, 5]), { rank: 5, others: 2, odd: true });
        assert.equal(classRep([null, -4], []), null);
    });

    it('gives one representative per main-thread class: odd first, then the larger classes', () => {
        const view = toStacksView(ANSWER);
        assert.deepEqual(stackClasses(view), [
            { rank: 254, others: 0, odd: true },
            { rank: 0, others: 252, odd: false },
            { rank: 252, others: 1, odd: false },
        ]);
    });

    it('labels a session with the class it stands for', () => {
        assert.equal(classLabel({ rank: 3, others: 252 }, l10n), 'rank 3 · 252 like it');
        assert.equal(classLabel({ rank: 7, others: 0 }, l10n), 'rank 7');
    });

    it('opens up to the cap, counting the sessions the window has on the job, and says the rest', () => {
        const reps = [1, 2, 3, 4, 5].map((rank) => ({ rank, others: 10 }));
        const capped = capClasses(reps, 3, new Set([2, 40]));
        assert.deepEqual(capped.shown.map((r) => r.rank), [2]);
        assert.deepEqual(capped.open.map((r) => r.rank), [1]);
        assert.deepEqual(capped.left.map((r) => r.rank), [3, 4, 5]);
        assert.deepEqual(capClasses(reps, 16, new Set()).open.length, 5);
        assert.deepEqual(capClasses(reps, 1, new Set([9, 8])).open, []);
    });

    it('puts the button and a debug action per tree node on the page, only with their words', () => {
        const view = toStacksView(ANSWER);
        const plain = renderStacks(view, STACKS_LABELS, NONCE);
        assert.ok(!plain.includes('id="debugClasses"'));
        assert.ok(!plain.includes('class="debugNode"'));
        const labels = { ...STACKS_LABELS, debugClasses: 'Debug one rank per class', debugAction: 'debug', debugNode: (r: number, ranks: string) => `Debug rank ${r} for ${ranks}` };
        const html = renderStacks(view, labels, NONCE);
        assert.match(html, /<button id="debugClasses" type="button" class="secondary" data-classes="3">Debug one rank per class<\/button>/);
        // The branch of ranks 252, 254, 255 is represented by its odd one, 254.
        const load = view.nodes.find((n) => n.frame.name === 'load');
        assert.ok(load);
        assert.match(html, new RegExp(`class="debugNode" data-node="${load.id}" title="Debug rank 254 for 252,254-255"`));
        assert.match(html, /postMessage\(\{ type: 'debugNode', node: Number\(debug\.dataset\.node\) \}\)/);
    });
});
