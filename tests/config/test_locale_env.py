"""The language a shell asks for (``common.locale_env``), in gettext's order."""

from __future__ import annotations

import pytest

from common.locale_env import environment_language


@pytest.mark.parametrize(
    ("environ", "language"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh-hans"),
        ({"LANG": "en_GB.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, None),
        ({"LANG": "POSIX"}, None),
        ({}, None),
        ({"LANG": "fr_FR.UTF-8"}, None),
        ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh-hans"),
        ({"LC_MESSAGES": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LANGUAGE": "fr:zh_CN", "LC_ALL": "en_US.UTF-8"}, "zh-hans"),
    ],
)
def test_the_first_language_the_project_has_in_gettexts_order(environ, language):
    assert environment_language(environ) == language
