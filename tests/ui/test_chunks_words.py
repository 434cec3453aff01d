"""A refusal about model chunks names the form's own field, not the CLI's option (the review's
left-over: the GUI said '--chunks' for model chunks): the Pipeline tab's Model chunks box, the
Training tab's count beside its Schedule ('interleaved x5')."""


def _refusal(w, qtbot) -> str:
    said = []
    w.sim_panel.message.connect(said.append)
    w.sim_panel.run_button.click()
    qtbot.waitUntil(lambda: bool(said), timeout=20000)
    return said[-1]


def test_a_pipeline_refusal_names_the_model_chunks_box(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(1)
    p.schedule.setCurrentText("1f1b")
    p.chunks.setValue(2)
    said = _refusal(w, qtbot)
    assert "the Model chunks box" in said and "--chunks" not in said, said
    assert said.startswith("Not run: ") and p.state.text() == said   # refused by the form: nothing ran


def test_a_training_refusal_names_the_count_beside_schedule(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(2)
    p.dp.setValue(1)
    p.tp.setValue(2)
    p.pp.setValue(4)
    p.train_schedule.setCurrentText("interleaved")
    p.train_chunks.setValue(5)   # 24 layers do not split into 4 stages x 5 chunks
    said = _refusal(w, qtbot)
    assert "Schedule x5" in said and "--chunks" not in said, said
