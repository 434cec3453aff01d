"""Topology exports: GraphML (networkx round trip), Graphviz DOT, the ns-3 edge list of ASTRA-sim
and SimAI, and ASTRA-sim's analytical network YAML when the topology fits its dimensions."""

from __future__ import annotations

import io
import json

import networkx as nx

from ..analysis.bandwidth import gpu_bandwidth
from ..analysis.paths import system_to_system_latency
from ..model.topology import Device, Group, Link, Topology


class ExportError(ValueError):
    """A topology the chosen format cannot express; the message says why."""


# ---- GraphML ----------------------------------------------------------------------------------------

def to_graphml_graph(topo: Topology) -> nx.MultiGraph:
    """Every device and link attribute, as GraphML can hold them (dicts as JSON text)."""
    g = nx.MultiGraph(name=topo.name, description=topo.description, format="dgxstudio-graphml")
    for d in topo.devices.values():
        grp = topo.group_of(d.id)
        g.add_node(d.id, kind=d.kind, part=d.part, name=d.name, properties=json.dumps(d.properties),
                   group=grp.id if grp else "")
    for lk in topo.links.values():
        attrs = {"id": lk.id, "type": lk.type, "count": lk.count, "a_port": lk.a_port or "", "b_port": lk.b_port or "",
                 "bandwidth_per_direction_Bps": topo.link_bandwidth_per_direction_Bps(lk)}
        if lk.width is not None:
            attrs["width"] = lk.width
        if lk.bandwidth_per_direction_Bps is not None:
            attrs["bandwidth_override_per_direction_Bps"] = lk.bandwidth_per_direction_Bps
        if lk.latency_s is not None:
            attrs["latency_override_s"] = lk.latency_s
        g.add_edge(lk.a, lk.b, key=lk.id, **attrs)
    g.graph["groups"] = json.dumps([{"id": x.id, "name": x.name, "kind": x.kind, "parent": x.parent}
                                    for x in topo.groups.values()])
    return g


def to_graphml(topo: Topology) -> str:
    buf = io.BytesIO()
    nx.write_graphml(to_graphml_graph(topo), buf, encoding="utf-8")
    # A raw CR in XML text reads back as LF; as a character reference it survives.
    return buf.getvalue().decode("utf-8").replace("\r", "&#13;")


class GraphmlError(ValueError):
    """A GraphML file that is not a topology; the message names the element or attribute."""


def from_graphml(text: str, catalog=None) -> Topology:
    """A topology from GraphML as ``to_graphml`` writes it; anything else is one ``GraphmlError``
    (malformed XML, missing or wrongly typed attributes) or ``TopologyFileError`` (the shared rules)."""
    from ..model import fileio

    if len(text) > fileio.MAX_FILE_BYTES:
        raise GraphmlError(f"over the limit of {fileio.MAX_FILE_BYTES} bytes")
    if fileio.SURROGATE.search(text):
        raise GraphmlError("not UTF-8 text (holds a lone surrogate)")
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise GraphmlError("document type declarations and entities are not accepted")
    try:
        topo = _from_graphml(text, catalog)
    except fileio.TopologyFileError:
        raise
    except KeyError as exc:
        raise GraphmlError(f"missing attribute {exc.args[0]!r}") from None
    except RecursionError:
        raise GraphmlError("nested too deeply") from None
    except (ValueError, TypeError, AttributeError, nx.NetworkXError, SyntaxError) as exc:
        # ElementTree's ParseError is a SyntaxError
        raise GraphmlError(str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__) from None
    return fileio.validated(topo)


_GRAPHML_NUMBERS = {"int": int, "long": int, "float": float, "double": float}


def _parse_graphml(text: str):
    """The document, parsed once: its root element. On the way, it says what the file is when it is XML but
    not GraphML (an NCCL XML picked by mistake: networkx answered that with a TypeError about bytes), at its
    first element; and every typed <data> value must read as its key's type, or the node or edge it sits on
    is named (networkx said only "invalid literal for int() with base 10: 'five'")."""
    import xml.etree.ElementTree as ET

    keys: dict[str, tuple[str, str]] = {}
    where = "the graph"
    root = None
    for event, elem in ET.iterparse(io.StringIO(text), events=("start", "end")):
        tag = elem.tag.rsplit("}", 1)[-1]
        if root is None:
            root = elem
            if tag != "graphml":
                raise GraphmlError(f"the root element is <{tag}>, not <graphml>"
                                   + (" (an NCCL topology: import it with --format nccl-xml)" if tag == "system" else ""))
        if (event == "end") != (tag == "data"):  # places when they open, values once read whole
            continue
        if tag == "key":
            keys[elem.get("id", "")] = (elem.get("attr.name", ""), elem.get("attr.type", "string"))
        elif tag == "node":
            where = f"<node id={elem.get('id', '')[:60]!r}>"
        elif tag == "edge":
            where = f"<edge {elem.get('source', '')[:60]!r} -> {elem.get('target', '')[:60]!r}>"
        elif tag == "data" and elem.get("key") in keys:
            name, kind = keys[elem.get("key")]
            convert = _GRAPHML_NUMBERS.get(kind)
            if convert is None:
                continue
            value = (elem.text or "").strip()
            try:
                convert(value)
            except ValueError:
                raise GraphmlError(f"{where}: {name} {value[:40]!r} is not a {'whole ' if convert is int else ''}number") from None
    return root


def _graph_of(root) -> nx.MultiGraph:
    """``nx.read_graphml(..., force_multigraph=True)`` of a parsed document (networkx's reader, given the
    elements instead of the text, which it would parse again)."""
    from networkx.readwrite.graphml import GraphMLReader

    reader = GraphMLReader(str, int, force_multigraph=True)
    keys, defaults = reader.find_graphml_keys(root)
    graph = root.find(f"{{{reader.NS_GRAPHML}}}graph")
    if graph is None:   # (networkx retried a bare <graphml> with its namespace, and failed on our text)
        raise GraphmlError(f"no <graph> element in the GraphML namespace, {reader.NS_GRAPHML}")
    return reader.make_graph(graph, keys, defaults)


def _from_graphml(text: str, catalog=None) -> Topology:
    from ..model import fileio

    import warnings

    root = _parse_graphml(text)
    with warnings.catch_warnings():  # networkx warns on stderr about keys it guesses; errors are ours to say
        warnings.simplefilter("ignore")
        g = _graph_of(root)
    if g.number_of_nodes() + g.number_of_edges() > fileio.MAX_ITEMS:
        raise GraphmlError(f"more than {fileio.MAX_ITEMS} nodes and edges")
    topo = Topology(g.graph.get("name", "imported"), catalog)
    topo.description = g.graph.get("description", "")
    groups = fileio.parse_json(g.graph.get("groups", "[]"))
    if not isinstance(groups, list):
        raise GraphmlError("the graph's groups attribute is not a list")
    for grp in groups:
        topo.groups[grp["id"]] = Group(grp["id"], grp["name"], grp["kind"], grp.get("parent"), [])
    for node, a in g.nodes(data=True):
        topo.devices[node] = Device(node, a["kind"], a["part"], a.get("name", node), fileio.parse_json(a.get("properties", "{}")))
        if a.get("group") and a["group"] in topo.groups:
            topo.groups[a["group"]].devices.append(node)
    for u, v, key, a in g.edges(keys=True, data=True):
        lid = str(a.get("id", key))
        if lid in topo.links:
            raise GraphmlError(f"<edge id={lid!r}>: duplicate id")
        topo.links[lid] = Link(lid, u, v, a["type"], int(a["count"]), a.get("a_port") or None,
                               a.get("b_port") or None, int(a["width"]) if "width" in a else None,
                               a.get("bandwidth_override_per_direction_Bps"), a.get("latency_override_s"))
    for grp in topo.groups.values():
        for parent in [grp.parent]:
            if parent is not None and parent not in topo.groups:
                raise GraphmlError(f"group {grp.id!r}: no parent group {parent!r}")
    return topo


# ---- Graphviz DOT ------------------------------------------------------------------------------------

def _dot_quote(text: str) -> str:
    """A DOT ID for any text. Graphviz reads a backslash before the closing quote as an escaped
    quote, so text ending in a backslash is written as an HTML string, where backslashes are plain."""
    if text.endswith("\\"):
        html = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        return "<" + html.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;") + ">"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


DOT_COLORS = {"nvlink": "#76b900", "pcie": "#7f7f7f", "infiniband": "#c0504d", "ethernet": "#8064a2", "cpu": "#2e75b6"}


def to_dot(topo: Topology) -> str:
    out = [f"graph {_dot_quote(topo.name)} {{", "  node [shape=box, style=rounded];"]
    for gid, grp in topo.groups.items():
        if grp.kind != "system":
            continue
        out.append(f"  subgraph {_dot_quote('cluster_' + gid)} {{ label={_dot_quote(grp.name)};")
        out.extend(f"    {_dot_quote(d)};" for d in grp.devices)
        out.append("  }")
    for d in topo.devices.values():
        out.append(f"  {_dot_quote(d.id)} [label={_dot_quote(d.name)}, kind={_dot_quote(d.kind)}, part={_dot_quote(d.part)}];")
    for lk in topo.links.values():
        lt = topo.link_type_of(lk)
        bw = topo.link_bandwidth_per_direction_Bps(lk)
        label = f"{lk.type} x{lk.count}" if lk.count > 1 else lk.type
        out.append(f"  {_dot_quote(lk.a)} -- {_dot_quote(lk.b)} [id={_dot_quote(lk.id)}, label={_dot_quote(label)}, "
                   f"color={_dot_quote(DOT_COLORS.get(lt.family if lt else '', '#000000'))}, "
                   f"bandwidth_per_direction_Bps=\"{bw:.6g}\"];")
    out.append("}")
    return "\n".join(out) + "\n"


# ---- ns-3 edge list (ASTRA-sim, SimAI) --------------------------------------------------------------

def to_ns3(topo: Topology) -> str:
    """``nodes switches links`` / switch ids / ``src dst <Gbps>Gbps <ms>ms 0``; GPUs are nodes 0..n-1."""
    gpus = [d.id for d in topo.gpus()]
    others = [d for d in topo.devices if d not in set(gpus)]
    index = {d: i for i, d in enumerate(gpus + others)}
    lines = [f"{len(index)} {len(others)} {len(topo.links)}", " ".join(str(index[d]) for d in others)]
    for lk in topo.links.values():
        gbps = topo.link_bandwidth_per_direction_Bps(lk) * 8 / 1e9
        ms = topo.link_latency_s(lk) * 1e3
        lines.append(f"{index[lk.a]} {index[lk.b]} {gbps:.6g}Gbps {ms:.6g}ms 0")
    return "\n".join(lines) + "\n"


# ---- ASTRA-sim analytical YAML ----------------------------------------------------------------------

def _intra_dimension(topo: Topology, gpus: list[str], where: str) -> tuple[str, float, float]:
    """(kind, bandwidth GB/s per direction per NPU link, latency ns) of one system's GPUs."""
    n = len(gpus)
    members = set(gpus)
    peers, switch_links = {}, {}
    for g in gpus:
        direct = set()
        via = 0.0
        for lk in topo.links_of(g):
            lt = topo.link_type_of(lk)
            if lt is None or lt.family != "nvlink":
                continue
            other = lk.other(g)
            if other in members:
                direct.add(other)
            elif topo.devices[other].kind == "nvswitch":
                via += topo.link_bandwidth_per_direction_Bps(lk)
        peers[g] = direct
        switch_links[g] = via
    lat = 0.0
    if all(switch_links[g] > 0 and not peers[g] for g in gpus):
        lt = next(topo.link_type_of(lk) for lk in topo.links_of(gpus[0]) if topo.link_type_of(lk).family == "nvlink")
        return "Switch", min(switch_links.values()) / 1e9, 2 * lt.latency_s * 1e9
    if n > 1 and all(len(peers[g]) == n - 1 for g in gpus):
        bws = [topo.link_bandwidth_per_direction_Bps(lk) for g in gpus for lk in topo.links_of(g) if lk.other(g) in members]
        lk0 = next(lk for lk in topo.links_of(gpus[0]) if lk.other(gpus[0]) in members)
        lat = topo.link_latency_s(lk0) * 1e9
        return "FullyConnected", min(bws) / 1e9, lat
    if n > 2 and all(len(peers[g]) == 2 for g in gpus) and nx.is_connected(
            nx.Graph([(g, p) for g in gpus for p in peers[g]])):
        bws = [topo.link_bandwidth_per_direction_Bps(lk) for g in gpus for lk in topo.links_of(g) if lk.other(g) in members]
        lk0 = next(lk for lk in topo.links_of(gpus[0]) if lk.other(gpus[0]) in members)
        return "Ring", min(bws) / 1e9, topo.link_latency_s(lk0) * 1e9
    degrees = sorted({len(p) for p in peers.values()})
    if degrees == [0]:  # a PCIe server: nothing joins its GPUs but the PCIe tree and the CPUs
        raise ExportError(f"{where}: its GPUs have no NVLink; ASTRA-sim's analytical network has no dimension for "
                          "a PCIe tree under CPUs (Ring, FullyConnected and Switch only)")
    raise ExportError(f"{where}: its GPUs are joined neither as a ring, a full mesh nor through NVSwitches "
                      f"(NVLink peers per GPU: {', '.join(map(str, degrees))}); ASTRA-sim's analytical network "
                      "cannot express an irregular graph such as the DGX-1 hybrid cube-mesh")


def to_astra_yaml(topo: Topology) -> str:
    systems: dict[str, list[str]] = {}
    for g in topo.gpus():
        systems.setdefault(topo.frame_of(g.id) or "", []).append(g.id)
    if not systems:
        raise ExportError("the topology has no GPUs")
    if "" in systems:
        raise ExportError("every GPU must belong to a system group to map it onto ASTRA-sim dimensions")
    sizes = {len(v) for v in systems.values()}
    if len(sizes) != 1:
        raise ExportError(f"systems hold different numbers of GPUs ({', '.join(map(str, sorted(sizes)))}); "
                          "ASTRA-sim dimensions need equal ones")
    dims = [_intra_dimension(topo, v, topo.groups[s].name) for s, v in systems.items()]
    if len({(k, round(b, 6)) for k, b, _ in dims}) != 1:
        raise ExportError("the systems are wired differently inside; ASTRA-sim dimensions need identical ones")
    kinds, npus, bws, lats = [dims[0][0]], [len(next(iter(systems.values())))], [dims[0][1]], [dims[0][2]]
    if len(systems) > 1:
        lat = system_to_system_latency(topo, list(systems))
        if lat is None:
            raise ExportError("the systems are not joined by a network")
        per_gpu = min(b.network_bidir_Bps for b in gpu_bandwidth(topo, [g for v in systems.values() for g in v])) / 2
        kinds.append("Switch")
        npus.append(len(systems))
        bws.append(per_gpu / 1e9)
        lats.append(lat.max_s * 1e9)

    def fmt(xs):
        return "[ " + ", ".join(f"{x:.6g}" if isinstance(x, float) else str(x) for x in xs) + " ]"
    return ("# ASTRA-sim analytical network, generated by DGX Studio from " + json.dumps(topo.name) + "\n"
            f"topology: [ {', '.join(kinds)} ]\nnpus_count: {fmt(npus)}\n"
            f"bandwidth: {fmt(bws)}  # GB/s per link, per direction\nlatency: {fmt(lats)}  # ns\n")
