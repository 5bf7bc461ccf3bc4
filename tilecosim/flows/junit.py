"""JUnit XML of a regression (``tilecosim regress --junit FILE``), in the schema CI servers read
(Jenkins, GitLab, GitHub's test reporters): one ``<testsuite>`` per operation, one
``<testcase>`` per functional coverage bin of that operation.

A bin's case fails when a scenario that hit the bin mismatched: the failure's ``message`` is
the first such mismatch, its text that mismatch, its reproduce command and its waveform,
then how many more scenarios of the bin failed.  A bin no scenario hit is skipped ("not
hit"), or fails under ``--require-coverage``; a bin a design's declared subset cannot hit
(D16) is skipped as not applicable.  A mismatch of a scenario that hit no bin gets a case of
its own, so that no failure is lost.  Each suite carries the run's seed, backend, width,
design and version as properties, which is what repeats it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from . import coverage as cov

__all__ = ["junit_xml"]


def _case(suite, op: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=f"tilecosim.regress.{op}", name=name,
                         time="0")


def _fail(case, fails: list) -> None:
    first = fails[0]
    text = [f"{first.op} #{first.index}: {first.problem}", f"reproduce: {first.repro}"]
    if first.waveform:
        text.append(f"waveform: {first.waveform}")
    if len(fails) > 1:
        text.append(f"and {len(fails) - 1} more mismatching scenarios of this bin: "
                    + ", ".join(f"#{o.index}" for o in fails[1:11])
                    + (" ..." if len(fails) > 11 else ""))
    el = ET.SubElement(case, "failure", message=f"{first.op} #{first.index}: {first.problem}",
                       type="mismatch")
    el.text = "\n".join(text)


def junit_xml(drawn: dict, hits: dict, outcomes: list, not_applicable: list, properties: dict,
              seconds: float, require_coverage: bool = False, stopped: str | None = None) -> str:
    """The JUnit XML text of a regression: ``drawn`` op -> its scenarios (those checked),
    ``hits`` bin -> scenarios that hit it (:func:`tilecosim.flows.coverage.hits` of
    ``drawn``), ``outcomes`` the failures and passes, ``properties`` name -> value for every
    suite."""
    na = set(not_applicable)
    root = ET.Element("testsuites", name="tilecosim regress", time=f"{seconds:.1f}")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for op, scs in drawn.items():
        bins_of = {s.index: s.bins for s in scs}
        fails = [o for o in outcomes if o.op == op and not o.ok]
        suite = ET.SubElement(root, "testsuite", name=f"tilecosim.regress.{op}")
        props = ET.SubElement(suite, "properties")
        for k, v in properties.items():
            ET.SubElement(props, "property", name=k, value=str(v))
        ET.SubElement(props, "property", name="scenarios", value=str(len(scs)))
        if stopped:
            ET.SubElement(props, "property", name="stopped", value=stopped)
        n = {"tests": 0, "failures": 0, "skipped": 0}
        for b in cov.all_bins(op):
            count = hits[b]
            case = _case(suite, op, b)
            n["tests"] += 1
            of_bin = [o for o in fails if b in bins_of.get(o.index, ())]
            if of_bin:
                _fail(case, of_bin)
                n["failures"] += 1
            elif b in na:
                ET.SubElement(case, "skipped", message="not applicable: outside the subset "
                                                       "the design declares")
                n["skipped"] += 1
            elif count == 0 and require_coverage:
                el = ET.SubElement(case, "failure", message="not hit (--require-coverage)",
                                   type="coverage")
                el.text = f"no scenario of this run hit {b}"
                n["failures"] += 1
            elif count == 0:
                ET.SubElement(case, "skipped", message="not hit by this run's scenarios")
                n["skipped"] += 1
            else:
                ET.SubElement(case, "system-out").text = (f"hit by {count} scenario"
                                                          + ("" if count == 1 else "s"))
        for o in fails:                         # a failure that no bin carries
            if not bins_of.get(o.index):
                case = _case(suite, op, f"scenario #{o.index}")
                _fail(case, [o])
                n["tests"] += 1
                n["failures"] += 1
        for k, v in n.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("errors", "0")
        suite.set("time", "0")
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
