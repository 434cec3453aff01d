"""The installed package starts offscreen and checks itself; packaging files say what they must."""

import configparser
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_self_test_from_the_installed_package():
    result = subprocess.run([sys.executable, "-m", "dgxstudio", "--self-test"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-test passed" in result.stdout and "GB/s" in result.stdout


def test_version_flag():
    from dgxstudio import __version__
    out = subprocess.run([sys.executable, "-m", "dgxstudio", "--version"], capture_output=True, text=True)
    assert out.stdout.strip() == f"dgxstudio {__version__}"


def test_desktop_file_registers_the_file_type():
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.optionxform = str
    desktop.read(ROOT / "packaging" / "dgxstudio.desktop")
    entry = desktop["Desktop Entry"]
    assert entry["Exec"] == "dgxstudio %f" and "application/x-dgxstudio-topology" in entry["MimeType"]
    mime = ET.parse(ROOT / "packaging" / "dgxstudio-mime.xml").getroot()
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    assert mime.find("m:mime-type", ns).get("type") == "application/x-dgxstudio-topology"
    assert mime.find("m:mime-type/m:glob", ns).get("pattern") == "*.dgxs"
    meta = ET.parse(ROOT / "packaging" / "io.github.dgxstudio.DGXStudio.metainfo.xml").getroot()
    assert meta.find("launchable").text == "dgxstudio.desktop"


def test_icons_are_shipped():
    from importlib.resources import files
    icons = files("dgxstudio.resources").joinpath("icons")
    assert icons.joinpath("dgxstudio.svg").is_file()
    for size in (16, 32, 48, 64, 128, 256):
        assert icons.joinpath(f"dgxstudio-{size}.png").is_file()


def test_about_text_names_versions_and_licences():
    from dgxstudio.ui.about import about_text
    text = about_text()
    assert "0.1.0" in text and "catalog version" in text and "LGPL-3.0" in text and "networkx" in text
