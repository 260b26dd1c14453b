"""pytest plugin (registered by jitviz's `pytest11` entry point): the `jitviz_compiles`
fixture records every jit compile made during one test, so a test suite can pin them.

    def test_training_step_compiles_once(jitviz_compiles):
        for batch in batches:
            step(params, batch)
        assert jitviz_compiles.count == 1, jitviz_compiles   # the repr lists each compile

    def test_warm_loop(jitviz_compiles):
        step(params, batches[0])
        with jitviz_compiles.expect(0):                       # raises at the call that compiles
            step(params, batches[1])

jitviz is imported only when a test asks for the fixture: loading the plugin costs nothing.
"""
import pytest


@pytest.fixture
def jitviz_compiles():
    from jitviz.budget import CompileCounter
    with CompileCounter(label="jitviz_compiles") as counter:
        yield counter
