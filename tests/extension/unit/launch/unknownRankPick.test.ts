import * as assert from 'node:assert/strict';
import { CHECK_DELAY_MS, RankChecker } from '../../../../extension/src/core/rankCheck';
import { askUnknownRanks } from '../../../../extension/src/launch/unknownRankPick';
import { FakePickHost, fakeChecks, ranksReply, tick } from './fakes';

const TITLE = 'Debug python · ray_trainer.py: which ranks?';
const UNKNOWN = `${TITLE} — how many ranks this command starts is not known here`;

/** A checker for a command whose ranks are not known, the server answering `1,3` and refusing `9`. */
function checker(allowArm = true): RankChecker {
    const { execute } = fakeChecks({
        '1,3': ranksReply([1, 3]),
        '1 arm': ranksReply([1], true),
        '9': { error: { message: '--ranks: rank 9 is past the last rank' } },
    });
    return new RankChecker(execute, { ranks: [], worldSize: null }, allowArm);
}

describe('launch/unknownRankPick', () => {
    it('offers choosing as the ranks start, the remembered choice highlighted, rank 0 and arming', () => {
        const host = new FakePickHost();
        void askUnknownRanks(host, checker(), TITLE, { spec: '1,3', arm: false, ranks: [1, 3] });
        const qp = host.pick;
        assert.equal(qp.title, UNKNOWN);
        assert.deepEqual(
            qp.items.map((i) => [i.label, i.description]),
            [
                ['Choose when the ranks start', 'every rank armed; pick ranks as they start, with their node and coordinates'],
                ['Ranks 1,3', 'last time'],
                ['Rank 0', '0'],
                ['No rank now — arm every rank', 'attach, evaluate or read stacks later from Training Jobs'],
            ],
        );
        assert.deepEqual(
            qp.activeItems.map((i) => i.label),
            ['Ranks 1,3'],
        );
        assert.match(qp.placeholder ?? '', /add "arm" to arm every rank/);
    });

    it('offers no arming where it is not allowed, and each remembered choice once', () => {
        const host = new FakePickHost();
        void askUnknownRanks(host, checker(false), TITLE, { spec: '0', arm: false, ranks: [0] });
        assert.deepEqual(
            host.pick.items.map((i) => i.label),
            ['Ranks 0'],
        );
        assert.doesNotMatch(host.pick.placeholder ?? '', /arm/);
        void askUnknownRanks(host, checker(), TITLE, { spec: '', arm: true, ranks: [] });
        assert.deepEqual(
            host.pick.items.map((i) => i.label),
            ['Choose when the ranks start', 'No rank now — arm every rank', 'Rank 0'],
        );
        void askUnknownRanks(host, checker(), TITLE, undefined);
        assert.deepEqual(host.pick.activeItems, []);
    });

    it('takes the highlighted item when nothing is typed', async () => {
        const host = new FakePickHost();
        const answer = askUnknownRanks(host, checker(), TITLE, undefined);
        const qp = host.pick;
        qp.activeItems = [qp.items[0]];
        await qp.enter();
        assert.deepEqual(await answer, { spec: '', arm: true, live: true });
    });

    it('takes a typed choice as the server reads it, over the highlighted item', async () => {
        const host = new FakePickHost();
        const answer = askUnknownRanks(host, checker(), TITLE, { spec: '1,3', arm: false, ranks: [1, 3] });
        host.pick.type('1 arm');
        await host.pick.enter();
        assert.deepEqual(await answer, { spec: '1', arm: true });
    });

    it("says the server's word on a typed text as you type, and does not take a refused one", async () => {
        const host = new FakePickHost();
        const answer = askUnknownRanks(host, checker(), TITLE, undefined);
        const qp = host.pick;
        qp.type('9');
        await tick(CHECK_DELAY_MS + 50);
        assert.equal(qp.title, `${UNKNOWN} — --ranks: rank 9 is past the last rank`);
        qp.type('1,3');
        await tick(CHECK_DELAY_MS + 50);
        assert.equal(qp.title, UNKNOWN);
        qp.type('9');
        await qp.enter();
        assert.equal(qp.hidden, false);
        assert.equal(qp.title, `${UNKNOWN} — --ranks: rank 9 is past the last rank`);
        qp.escape();
        assert.equal(await answer, undefined);
    });
});
