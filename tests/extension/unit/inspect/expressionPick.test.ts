import * as assert from 'node:assert/strict';
import { pickExpression, RecentExpressions } from '../../../../extension/src/inspect/expressionPick';
import { FakePickHost, Memento } from '../launch/fakes';

describe('inspect/expressionPick', () => {
    it('offers the given expressions, then the recent ones not offered already', () => {
        const host = new FakePickHost();
        void pickExpression(host, { title: 'Compare', placeholder: 'an expression', offered: [{ label: 'loss', description: 'selected in the editor' }], recent: ['grad', 'loss'] });
        assert.deepEqual(
            host.pick.items.map((i) => [i.label, i.description]),
            [
                ['loss', 'selected in the editor'],
                ['grad', 'recent'],
            ],
        );
        assert.equal(host.pick.title, 'Compare');
    });

    it('offers what is typed first when it is none of the items, and takes it', async () => {
        const host = new FakePickHost();
        const answer = pickExpression(host, { title: 'Evaluate', placeholder: '', recent: ['grad'] });
        const qp = host.pick;
        qp.type(' model.fc.weight ');
        assert.deepEqual(
            qp.items.map((i) => i.label),
            ['model.fc.weight', 'grad'],
        );
        qp.type('grad');
        assert.deepEqual(
            qp.items.map((i) => i.label),
            ['grad'],
        );
        qp.type('lr');
        await qp.enter();
        assert.equal(await answer, 'lr');
        assert.ok(qp.disposed);
    });

    it('takes the item chosen, and nothing when dismissed or empty', async () => {
        const host = new FakePickHost();
        const chosen = pickExpression(host, { title: '', placeholder: '', recent: ['grad', 'loss'] });
        host.pick.check('loss');
        await host.pick.enter();
        assert.equal(await chosen, 'loss');
        const dismissed = pickExpression(host, { title: '', placeholder: '', recent: [] });
        host.pick.escape();
        assert.equal(await dismissed, undefined);
        const empty = pickExpression(host, { title: '', placeholder: '', recent: [] });
        host.pick.type('   ');
        await host.pick.enter();
        assert.equal(await empty, undefined);
    });

    it('keeps the recent expressions newest first, without duplicates', async () => {
        const memento = new Memento();
        const recent = new RecentExpressions(memento.asMemento);
        await recent.add('loss');
        await recent.add('grad');
        await recent.add('loss');
        assert.deepEqual(recent.list(), ['loss', 'grad']);
    });
});
