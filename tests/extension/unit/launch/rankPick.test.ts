import * as assert from 'node:assert/strict';
import { RankChecker } from '../../../../extension/src/core/rankCheck';
import type { PlanRank } from '../../../../extension/src/core/ranks';
import { RankMemory, pickRanks, recall } from '../../../../extension/src/launch/rankPick';
import { FakePickHost, Memento, fakeChecks, ranksReply, shownPick } from './fakes';

const RANKS: PlanRank[] = [0, 1, 2, 3].map((rank) => ({ rank, node_rank: 0, local_rank: rank }));
const ANSWERS = {
    all: ranksReply([0, 1, 2, 3], false, '0,1,2,3'),
    '0': ranksReply([0]),
    local0: ranksReply([0]),
    '1,3': ranksReply([1, 3]),
    '1,3+arm': ranksReply([1, 3], true),
    arm: ranksReply([], true, ''),
};

function setup(allowArm = true): { host: FakePickHost; memory: RankMemory; state: Memento; checker: RankChecker } {
    const state = new Memento();
    const { execute } = fakeChecks(ANSWERS);
    return { host: new FakePickHost(), state, memory: new RankMemory(state.asMemento), checker: new RankChecker(execute, { ranks: RANKS, worldSize: 4 }, allowArm) };
}

describe('launch/rankPick', () => {
    it('preselects the choice remembered for the command and remembers the new one', async () => {
        const { host, memory, checker } = setup();
        await memory.set('train.sh#3', '1,3+arm');
        const answer = pickRanks(host, checker, RANKS, { title: 'Debug', memory, key: 'train.sh#3' });
        const qp = await shownPick(host);
        assert.deepEqual(qp.checked(), ['rank 1 · node 0 · local 1', 'rank 3 · node 0 · local 3', 'Arm every rank']);
        assert.deepEqual(
            qp.items.filter((i) => i.description === '0-3' || i.label === 'Local rank 0 of each node').map((i) => i.label),
            ['All ranks'],
            'the presets as the server resolved them; local rank 0 only with more than one node',
        );
        qp.check('All ranks');
        await qp.enter();
        assert.deepEqual(await answer, { spec: 'all', arm: false });
        assert.equal(memory.get('train.sh#3'), 'all');
    });

    it('neither reads nor writes the memory when rankdebug.rememberRanks is off', async () => {
        const { host, memory, checker } = setup();
        await memory.set('k', '1,3');
        host.remember = false;
        const answer = pickRanks(host, checker, RANKS, { title: 'Debug', memory, key: 'k' });
        const qp = await shownPick(host);
        assert.deepEqual(qp.checked(), ['rank 0 · node 0 · local 0']);
        await qp.enter();
        assert.deepEqual(await answer, { spec: '0', arm: false });
        assert.equal(memory.get('k'), '1,3');
    });

    it('asks with the pick for an unknown count when the plan has no ranks, and does not remember Choose when the ranks start', async () => {
        const { host, memory, checker } = setup();
        const answer = pickRanks(host, checker, [], { title: 'Debug', memory, key: 'k' });
        const qp = await shownPick(host);
        assert.match(qp.title ?? '', /how many ranks this command starts is not known here/);
        qp.activeItems = [qp.items[0]];
        await qp.enter();
        assert.deepEqual(await answer, { spec: '', arm: true, live: true });
        assert.equal(memory.get('k'), undefined);
    });

    it('drops a remembered arming where arming is not offered, and a choice that no longer fits', async () => {
        const { checker } = setup(false);
        assert.deepEqual(await recall(checker, '1,3+arm'), { spec: '1,3', arm: false, ranks: [1, 3] });
        assert.equal(await recall(checker, 'arm'), undefined);
        assert.equal(await recall(checker, '7'), undefined);
        assert.equal(await recall(checker, undefined), undefined);
    });

    it('keeps the last 200 commands, the newest last', async () => {
        const { memory, state } = setup();
        for (let i = 0; i < 205; i++) await memory.set(`k${i}`, String(i % 4));
        await memory.set('k10', '3');
        const kept = Object.keys(state.values.get('rankdebug.lastRanks') as Record<string, string>);
        assert.equal(kept.length, 200);
        assert.equal(kept.at(-1), 'k10');
        assert.equal(memory.get('k0'), undefined);
    });
});
