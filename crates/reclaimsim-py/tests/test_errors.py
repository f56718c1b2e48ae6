"""Bad input raises ScenarioError with the located message the CLI prints."""

from __future__ import annotations

import pathlib

import pytest
import reclaimsim

from conftest import TINY


def test_bad_field_in_text_names_line_and_field() -> None:
    text = TINY.replace('memory = "64MiB"', 'memory = "lots"')
    line = text.splitlines().index('memory = "lots"') + 1
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.run(text)
    err = e.value
    assert isinstance(err, ValueError)
    assert (err.file, err.line, err.field, err.from_set) == ("<string>", line, "machine.memory", False)
    assert str(err).startswith(f"<string>:{line}: machine.memory: ")
    assert "not a size" in err.detail


def test_bad_field_in_file_names_the_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(TINY.replace('size = "40MiB"', 'size = -3'))
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.compare(path)
    assert e.value.file == str(path)
    assert e.value.line == TINY.splitlines().index('size = "40MiB"') + 1
    assert e.value.field.endswith("fio.size")


def test_syntax_error_unknown_key_and_bad_variant() -> None:
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.run(TINY + "\n[machine\n")
    assert e.value.line == len(TINY.splitlines()) + 2
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.run(TINY.replace("cpus = 2", "cpus = 2\nbogus = 1"))
    assert "bogus" in str(e.value)
    with pytest.raises(reclaimsim.ScenarioError, match='no variant "nope" \\(there are: classic, mglru\\)'):
        reclaimsim.run(TINY, variant="nope")


def test_bad_set_is_from_set() -> None:
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.run(TINY, set={"machine.memory": "-1GiB"})
    assert e.value.from_set and e.value.field == "machine.memory"
    assert str(e.value).startswith("--set machine.memory: ")


def test_bad_dict_value_and_bad_arguments() -> None:
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.run({"name": "x", "machine": {"memory": None}})
    assert (e.value.file, e.value.field) == ("<dict>", "machine.memory")
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.run("/no/such/scenario.toml")
    assert e.value.file == "/no/such/scenario.toml" and "cannot read" in str(e.value)
    with pytest.raises(TypeError):
        reclaimsim.run(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        reclaimsim.run(TINY, set={"duration": object()})


def test_sweep_checks_every_point_before_running() -> None:
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.sweep(TINY, grid={"machine.memory": ["64MiB", "-1"]})
    assert e.value.from_set and e.value.field == "machine.memory"
    with pytest.raises(reclaimsim.ScenarioError):
        reclaimsim.sweep(TINY, grid={})
    with pytest.raises(ValueError, match="backend"):
        reclaimsim.sweep(TINY, grid={"seed": [1]}, backend="spark")


def test_a_bad_grid_value_names_its_key_and_index() -> None:
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.sweep(TINY, grid={"machine.memory": ["64MiB", "96MiB", "8XB"]})
    assert str(e.value).startswith('grid["machine.memory"][2] = "8XB": '), str(e.value)
    assert e.value.from_set and e.value.field == "machine.memory"
    with pytest.raises(ValueError, match=r'^grid\[\("kernel.swappiness", "seed"\)\]\[1\] = -5: '):
        reclaimsim.sweep(TINY, grid={("kernel.swappiness", "seed"): [10, -5]})
