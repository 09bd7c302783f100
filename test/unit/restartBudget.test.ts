import { strict as assert } from 'assert';
import { RestartBudget } from '../../src/vscode/restartBudget';

describe('RestartBudget', () => {
  it('allows `max` restarts within the window, then none until the oldest leaves it', () => {
    let now = 0;
    const budget = new RestartBudget(2, 1000, () => now);
    assert.equal(budget.take(), true);
    now = 400;
    assert.equal(budget.take(), true);
    now = 900;
    assert.equal(budget.take(), false);
    now = 1001;
    assert.equal(budget.take(), true);
    assert.equal(budget.take(), false);
  });
});
