import * as assert from 'node:assert/strict';
import { compactRanks, parseRankList, toStacksView } from '../../../../extension/src/core/stacks';
import { highlightRanks, renderCollectives, renderStacks, renderTree } from '../../../../extension/src/core/stacksHtml';
import { NONCE, STACKS_LABELS as LABELS } from '../fixtures';

const C10D = '/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py';
const TRAIN = '/home/me/proj/train.py';
const fr = (name: string, file: string, line: number, library = false) => ({ name, file, line, library, short: `${file.split('/').pop()}:${line}` });
const node = (f: ReturnType<typeof fr>, ranks: number[], children: unknown[] = []) => ({ ...f, count: ranks.length, ranks, children });

// `rankdebug stacks JOB --json` of four ranks: 0-2 in all_reduce #6, rank 3 in its data loader,
// past #5 and in no collective (the odd one out).
const ANSWER = {
    job: '4242@node0',
    time: 1795361102.33,
    seconds: 0.2,
    samples: 3,
    ranks: [0, 1, 2, 3].map((r) => ({
        rank: r,
        pid: 10 + r,
        error: null,
        collectives: { current: r < 3 ? { op: 'all_reduce', group: '0', desc: 'default_pg', seq: 6, source: 'flight_recorder' } : null, groups: {} },
        threads: [],
    })),
    groups: [
        { thread: 'MainThread', main: true, ranks: [0, 1, 2], pids: [10, 11, 12], label: 'ranks 0-2', summary: 'all_reduce ← train_step ← main', collective: 'all_reduce', active: false, odd: false, frames: [fr('all_reduce', C10D, 2501, true), fr('train_step', TRAIN, 30), fr('main', TRAIN, 42)] },
        { thread: 'MainThread', main: true, ranks: [3], pids: [13], label: 'rank 3', summary: '__next__ ← train_step ← main', collective: null, active: true, odd: true, frames: [fr('__next__', '/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py', 700, true), fr('train_step', TRAIN, 28), fr('main', TRAIN, 42)] },
    ],
    odd: [3],
    tree: [
        node(fr('<module>', TRAIN, 50), [0, 1, 2, 3], [
            node(fr('main', TRAIN, 42), [0, 1, 2, 3], [
                node(fr('train_step', TRAIN, 30), [0, 1, 2], [node(fr('all_reduce', C10D, 2501, true), [0, 1, 2])]),
                node(fr('train_step', TRAIN, 28), [3], [node(fr('<b>__next__</b>', '<string>', 1, true), [3])]),
            ]),
        ]),
    ],
    collectives: [
        {
            group: '0',
            desc: 'default_pg',
            odd: [3],
            message: 'group 0 (default_pg): rank 3 is past #5, in none of its collectives; ranks 0-2 at all_reduce #6',
            positions: [{ ranks: [0, 1, 2], op: 'all_reduce', seq: 6 }, { ranks: [3], op: null, seq: 5 }],
        },
    ],
};

describe('core/stacks: the merged tree and the collectives', () => {
    const view = toStacksView(ANSWER);

    it('keeps the nesting, counts and ranks, numbering the nodes in preorder', () => {
        assert.equal(view.tree.length, 1);
        const [root] = view.tree;
        assert.equal(root.frame.name, '<module>');
        assert.equal(root.count, 4);
        assert.equal(view.treeTotal, 4);
        const main = root.children[0];
        assert.deepEqual(main.children.map((c) => [c.frame.name, c.frame.line, c.count, c.ranks]), [
            ['train_step', 30, 3, [0, 1, 2]],
            ['train_step', 28, 1, [3]],
        ]);
        assert.equal(main.children[0].children[0].frame.name, 'all_reduce');
        assert.equal(main.children[0].children[0].frame.library, true);
        assert.deepEqual(view.nodes.map((n) => n.id), [0, 1, 2, 3, 4, 5]);
        view.nodes.forEach((n, i) => assert.equal(view.nodes[i], n));
        assert.equal(view.nodes[3].frame.name, 'all_reduce');
        assert.equal(view.nodes[4].frame.line, 28);
    });

    it('marks the branch of the odd ranks, not the ones that hold everybody', () => {
        assert.deepEqual(view.odd, [3]);
        assert.deepEqual(view.nodes.map((n) => n.odd), [false, false, false, false, true, true]);
        // an answer with no odd rank marks nothing
        assert.ok(toStacksView({ ...ANSWER, odd: [], collectives: [] }).nodes.every((n) => !n.odd));
        // a rank odd only in its collectives is marked too
        assert.equal(toStacksView({ ...ANSWER, odd: [] }).nodes[4].odd, true);
    });

    it("reads the collectives and each rank's current one with its number", () => {
        assert.deepEqual(view.collectives, [{ group: '0', desc: 'default_pg', odd: [3], message: ANSWER.collectives[0].message }]);
        assert.equal(view.columns[0].current, 'all_reduce #6');
        assert.equal(view.columns[1].current, null);
        const mixed = structuredClone(ANSWER);
        mixed.ranks[2].collectives.current = { op: 'broadcast', group: '0', desc: 'default_pg', seq: 5, source: 'stack' };
        assert.equal(toStacksView(mixed).columns[0].current, 'all_reduce #6 (0-1); broadcast #5 (2)');
    });

    it('is empty, not broken, for an answer from an older CLI', () => {
        const old = toStacksView({ ranks: [], groups: [] });
        assert.deepEqual([old.tree, old.nodes, old.collectives, old.odd, old.treeTotal], [[], [], [], [], 0]);
        assert.ok(!renderStacks(old, LABELS, NONCE).includes('class="toggle"'));
    });

    it('writes ranks compactly and reads them back', () => {
        assert.equal(compactRanks([2, 0, 1, 4, 6, 7, 8]), '0-2,4,6-8');
        assert.equal(compactRanks([3]), '3');
        assert.equal(compactRanks([0, -123]), '0, pid 123');
        assert.deepEqual(parseRankList('0-2,4'), [0, 1, 2, 4]);
    });
});

describe('core/stacksHtml: the tree and the collectives', () => {
    const view = toStacksView(ANSWER);
    const html = renderStacks(view, LABELS, NONCE);
    const tree = renderTree(view, LABELS);

    it('nests the branches, a chain with the same ranks at one level', () => {
        // <module> → main (same ranks: one level) → two branches
        const kids = tree.indexOf('<div class="kids">');
        assert.ok(kids > tree.indexOf('>main<') && kids < tree.indexOf('>train_step<'));
        assert.equal((tree.match(/<details /g) ?? []).length, 3);
        assert.match(tree, /<summary><div class="row user head" data-node="0"><span class="count"[^>]*>4\/4<\/span><span class="who">0-3<\/span><span class="name">&lt;module&gt;<\/span>/);
        assert.match(tree, /<div class="row user chain" data-node="1"><span class="name">main<\/span>/);
        assert.match(tree, />3\/4<\/span><span class="who">0-2<\/span><span class="name">train_step<\/span>/);
        // the 1/4 branch nests inside main's children, after the larger one
        assert.ok(tree.indexOf('>3/4<') < tree.indexOf('>1/4<'));
    });

    it('emphasises the user frames, dims the library ones, marks the odd branch', () => {
        assert.match(tree, /class="row library chain" data-node="3"><span class="name">all_reduce</);
        assert.match(tree, /class="row user odd head" data-node="4">[^]*?<mark>3<\/mark>/);
        assert.ok(tree.includes('class="branch odd"'));
        assert.ok(tree.includes('class="branch has-odd"'));
        assert.ok(!/data-node="2"[^>]*odd/.test(tree));
        // escaped, and a place that is no file is not a link
        assert.ok(tree.includes('&lt;b&gt;__next__&lt;/b&gt;'));
        assert.ok(!tree.includes('<b>'));
        assert.ok(!/<a [^>]*data-node="5"/.test(tree));
    });

    it('links places and group actions by node index, never by path', () => {
        assert.ok(tree.includes('<a href="#" class="place" data-node="2" title="/home/me/proj/train.py:30">train.py:30</a>'));
        assert.ok(tree.includes('<button type="button" class="group" data-node="2" title="Make a rank group of ranks 0-2">group</button>'));
        assert.ok(tree.includes('class="group" data-node="4"'));
        // a chain's rows have the ranks of its head: no group action of their own
        assert.ok(!tree.includes('class="group" data-node="1"'));
    });

    it('opens in the Tree view when the job has more than one rank', () => {
        assert.match(html, /<body class="mode-tree" data-mode="tree">/);
        assert.ok(html.includes('<main class="tree">') && html.includes('<main class="columns">'));
        assert.ok(html.includes('data-mode="tree" class="on"'));
        const one = toStacksView({ ...ANSWER, ranks: ANSWER.ranks.slice(0, 1) });
        assert.match(renderStacks(one, LABELS, NONCE), /<body class="mode-columns"/);
    });

    it('warns of the collectives the ranks disagree on, the odd ranks highlighted', () => {
        const warn = renderCollectives(view.collectives);
        assert.equal((warn.match(/class="warning"/g) ?? []).length, 1);
        assert.ok(warn.includes('group 0 (default_pg): <mark>rank 3</mark> is past #5, in none of its collectives; ranks 0-2 at all_reduce #6'));
        assert.ok(html.indexOf('class="collectives"') < html.indexOf('<main class="tree">'));
        assert.equal(renderCollectives([]), '');
        assert.equal(highlightRanks('ranks 0-2 and rank <3>', [0, 1, 2]), '<mark>ranks 0-2</mark> and rank &lt;3&gt;');
    });

    it("shows each column's current collective with its number", () => {
        assert.ok(html.includes('<span class="badge wait">waiting in all_reduce #6</span>'));
    });
});
