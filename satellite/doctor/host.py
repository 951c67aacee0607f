"""The doctor's checks of the machine: CPU governor, temperature, throttling, memory, disk.

Each reads what Linux (and, on a Raspberry Pi, the firmware through ``vcgencmd``) shows;
what is not readable here (a container, another board) is reported as skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .report import Finding, ok, problem, skipped, warning

#: Below this the satellite (about 200 MB, 550 MB with the LLM) may be killed.
MIN_AVAILABLE_MB = 300
#: Below this the outbox (QoS 1 events while the broker is away) may not be written.
MIN_DISK_MB = 50
HOT_CELSIUS = 80.0
#: vcgencmd get_throttled bits: now (0-3) and since boot (16-19).
_THROTTLE_BITS = {
    0: "under-voltage now",
    1: "ARM frequency capped now",
    2: "throttled now",
    3: "soft temperature limit now",
    16: "under-voltage has occurred",
    17: "frequency capping has occurred",
    18: "throttling has occurred",
    19: "soft temperature limit has occurred",
}


def governor(sys_root: Path = Path("/sys")) -> Finding:
    path = sys_root / "devices/system/cpu/cpu0/cpufreq/scaling_governor"
    try:
        name = path.read_text().strip()
    except OSError:
        return skipped("cpu governor", "not readable here (no cpufreq)")
    if name == "powersave":
        return warning(
            "cpu governor",
            "powersave: replies come later",
            "echo ondemand | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
        )
    return ok("cpu governor", name)


def temperature(sys_root: Path = Path("/sys")) -> Finding:
    path = sys_root / "class/thermal/thermal_zone0/temp"
    try:
        celsius = int(path.read_text().strip()) / 1000
    except (OSError, ValueError):
        return skipped("temperature", "not readable here (no thermal zone)")
    if celsius >= HOT_CELSIUS:
        return problem(
            "temperature",
            f"{celsius:.1f} °C: the CPU throttles",
            "add a heatsink or a fan, or give the Pi air",
        )
    return ok("temperature", f"{celsius:.1f} °C")


def throttling(vcgencmd: str | None = None) -> Finding:
    program = vcgencmd or shutil.which("vcgencmd")
    if program is None:
        return skipped("throttling", "vcgencmd not found (not a Raspberry Pi)")
    try:
        out = subprocess.run(
            [program, "get_throttled"], capture_output=True, text=True, timeout=5, check=True
        ).stdout
        bits = int(out.strip().partition("=")[2], 16)
    except (OSError, subprocess.SubprocessError, ValueError) as err:
        return skipped("throttling", f"vcgencmd get_throttled failed ({err})")
    found = [text for bit, text in _THROTTLE_BITS.items() if bits & (1 << bit)]
    if bits & 0xF:
        return problem(
            "throttling", ", ".join(found), "use the official power supply (5 V, 3 A or more)"
        )
    if found:
        return warning("throttling", ", ".join(found), "check the power supply and cooling")
    return ok("throttling", "none since boot")


def memory(meminfo: Path = Path("/proc/meminfo")) -> Finding:
    try:
        fields = dict(line.split(":", 1) for line in meminfo.read_text().splitlines())
        available_mb = int(fields["MemAvailable"].split()[0]) // 1024
    except (OSError, KeyError, ValueError):
        return skipped("memory", f"{meminfo} not readable")
    if available_mb < MIN_AVAILABLE_MB:
        return problem(
            "memory",
            f"{available_mb} MB available",
            f"stop other services or set llm.enabled: false (needs {MIN_AVAILABLE_MB} MB)",
        )
    return ok("memory", f"{available_mb} MB available")


def disk(folder: Path) -> Finding:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free_mb = shutil.disk_usage(probe).free // 2**20
    if free_mb < MIN_DISK_MB:
        return problem(
            "disk",
            f"{free_mb} MB free for the outbox at {folder}",
            f"free some space (at least {MIN_DISK_MB} MB) or move mqtt.outbox_path",
        )
    return ok("disk", f"{free_mb} MB free for the outbox at {folder}")
