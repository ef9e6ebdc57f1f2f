import * as assert from 'node:assert/strict';
import { CHECK_DELAY_MS, RankChecker, type CheckedChoice } from '../../../../extension/src/core/rankCheck';
import { presets, type PlanRank } from '../../../../extension/src/core/ranks';
import { showRankQuickPick } from '../../../../extension/src/launch/rankQuickPick';
import { FakePickHost, SEPARATOR, fakeChecks, ranksReply, tick } from './fakes';

const TITLE = 'Debug torchrun · train.py: which ranks?';
/** Two nodes of two ranks. */
const RANKS: PlanRank[] = [0, 1, 2, 3].map((rank) => ({ rank, node_rank: Math.floor(rank / 2), local_rank: rank % 2 }));
const PRESETS = presets({ all: [0, 1, 2, 3], rank0: [0], local0: [0, 2] }, 2);

function checker(allowArm = true): RankChecker {
    const { execute } = fakeChecks({
        '2': ranksReply([2]),
        '1-3 arm': ranksReply([1, 2, 3], true, '1,2,3'),
        'node 1': { error: { message: '--ranks: node is not a rank spec' } },
        'zz': { error: { message: '--ranks: zz is not a rank spec' } },
    });
    return new RankChecker(execute, { ranks: RANKS, worldSize: 4 }, allowArm);
}

function show(last?: CheckedChoice, allowArm = true): { host: FakePickHost; answer: ReturnType<typeof showRankQuickPick> } {
    const host = new FakePickHost();
    const answer = showRankQuickPick(host, { checker: checker(allowArm), ranks: RANKS, presets: PRESETS, last, title: TITLE });
    return { host, answer };
}

describe('launch/rankQuickPick', () => {
    it('shows presets, a separator per node over its ranks and the arm option, rank 0 checked', () => {
        const { host } = show();
        const qp = host.pick;
        assert.equal(qp.title, TITLE);
        assert.ok(qp.canSelectMany && qp.matchOnDescription);
        assert.deepEqual(
            qp.items.map((i) => (i.kind === SEPARATOR ? `-- ${i.label}` : i.label)),
            [
                '-- Presets',
                'All ranks',
                'Rank 0',
                'Local rank 0 of each node',
                'No rank now — arm every rank',
                '-- node 0 · 0,1',
                'rank 0 · node 0 · local 0',
                'rank 1 · node 0 · local 1',
                '-- node 1 · 2,3',
                'rank 2 · node 1 · local 0',
                'rank 3 · node 1 · local 1',
                '-- Later',
                'Arm every rank',
            ],
        );
        assert.deepEqual(qp.checked(), ['rank 0 · node 0 · local 0']);
    });

    it('checks the remembered ranks and arming, and nothing but arming when only arming was remembered', () => {
        assert.deepEqual(show({ spec: '1,3', arm: true, ranks: [1, 3] }).host.pick.checked(), ['rank 1 · node 0 · local 1', 'rank 3 · node 1 · local 1', 'Arm every rank']);
        assert.deepEqual(show({ spec: '', arm: true, ranks: [] }).host.pick.checked(), ['Arm every rank']);
    });

    it('replaces the checked ranks with a preset toggled on, keeping arming; No rank now checks arming alone', () => {
        const { host } = show({ spec: '1', arm: true, ranks: [1] });
        const qp = host.pick;
        qp.check('Local rank 0 of each node', 'rank 1 · node 0 · local 1', 'Arm every rank');
        assert.deepEqual(qp.checked(), ['rank 0 · node 0 · local 0', 'rank 2 · node 1 · local 0', 'Arm every rank']);
        qp.check('No rank now — arm every rank', 'rank 0 · node 0 · local 0');
        assert.deepEqual(qp.checked(), ['Arm every rank']);
    });

    it('takes the checked ranks, written as the preset that names them', async () => {
        const { host, answer } = show();
        host.pick.check('rank 0 · node 0 · local 0', 'rank 2 · node 1 · local 0');
        await host.pick.enter();
        assert.deepEqual(await answer, { spec: 'local0', arm: false });
    });

    it('does not take nothing checked and nothing armed', async () => {
        const { host, answer } = show();
        host.pick.check();
        await host.pick.enter();
        assert.equal(host.pick.hidden, false);
        host.pick.check('Arm every rank');
        await host.pick.enter();
        assert.deepEqual(await answer, { spec: '', arm: true });
    });

    it('takes a typed choice as the server reads it, armed when the option is checked', async () => {
        const { host, answer } = show({ spec: '', arm: true, ranks: [] });
        host.pick.type('2');
        await host.pick.enter();
        assert.deepEqual(await answer, { spec: '2', arm: true });
        const plain = show(undefined, false);
        plain.host.pick.type('1-3 arm');
        await plain.host.pick.enter();
        assert.deepEqual(await plain.answer, { spec: '1-3', arm: false }, 'no arming where it is not offered');
    });

    it('leaves the checked rows to Enter when the text filters them, and says why other text takes nothing', async () => {
        const { host, answer } = show();
        const qp = host.pick;
        qp.type('zz');
        await qp.enter();
        assert.equal(qp.title, `${TITLE} — --ranks: zz is not a rank spec`);
        qp.type('node 1');
        await tick(CHECK_DELAY_MS + 50);
        assert.equal(qp.title, TITLE, 'a filter of the rows is no mistake');
        qp.check('rank 3 · node 1 · local 1');
        await qp.enter();
        assert.deepEqual(await answer, { spec: '3', arm: false });
    });

    it('says what Enter takes for a typed choice as you type', async () => {
        const { host } = show();
        host.pick.type('1-3 arm');
        await tick(CHECK_DELAY_MS + 50);
        assert.equal(host.pick.title, `${TITLE} — Enter: ranks 1-3, every rank armed`);
    });
});
