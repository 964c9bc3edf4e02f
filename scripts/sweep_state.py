#!/usr/bin/python3
"""Reading a run of the hostile sweep (scripts/sweep_solids.py) back from its files: PLY frames,
diagnostics.csv, and the tets of a voxel or TetGen solid matched to the frames by position, with
the signed volumes and the elastic energy the engine's tet FEM stores (recomputed independently)."""
import csv

import numpy as np

SUBNORMAL = 2.2250738585072014e-308


def read_ply(path):
    """(x, v, mass, phantom x or None, phantom v or None, faces (k, 3), subnormal count)."""
    with open(path) as f:
        text = f.read()
    head, _, body = text.partition("end_header\n")
    props, nv, nf, in_vertex = [], 0, 0, False
    for line in head.splitlines():
        w = line.split()
        if w[:2] == ["element", "vertex"]:
            nv, in_vertex = int(w[2]), True
        elif w[:2] == ["element", "face"]:
            nf, in_vertex = int(w[2]), False
        elif w and w[0] == "property" and in_vertex:
            props.append(w[2])
    lines = body.splitlines()
    if len(lines) != nv + nf:
        raise ValueError(f"{path}: {len(lines)} rows, header says {nv} + {nf}")
    vals = np.array([[float(t) for t in ln.split()] for ln in lines[:nv]])
    sub = int(np.count_nonzero((vals != 0) & (np.abs(vals) < SUBNORMAL)))
    col = {p: vals[:, i] for i, p in enumerate(props)}
    x = np.stack([col["x"], col["y"], col["z"]], 1)
    v = np.stack([col["vx"], col["vy"], col["vz"]], 1)
    px = pv = None
    if "phantom_x" in col:
        px = np.stack([col["phantom_x"], col["phantom_y"], col["phantom_z"]], 1)
        pv = np.stack([col["phantom_vx"], col["phantom_vy"], col["phantom_vz"]], 1)
    faces = np.array([[int(t) for t in ln.split()[1:4]] for ln in lines[nv:]], dtype=np.int64).reshape(-1, 3)
    return x, v, col["mass"], px, pv, faces, sub


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


def kuhn_tets(ijk_index, voxels):
    """The 6 Kuhn tets of each voxel (engine/io/mesh/tet_shapes.cpp's split), as vertex indices."""
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    tets = []
    for (i, j, k) in voxels:
        for a, b, _ in perms:
            p0 = np.array([i, j, k])
            p1 = p0.copy()
            p1[a] += 1
            p2 = p1.copy()
            p2[b] += 1
            p3 = p0 + 1
            tets.append([ijk_index[tuple(p)] for p in (p0, p1, p2, p3)])
    return np.array(tets, dtype=np.int64)


def voxel_tets(x0, cell):
    """Tets of a voxel solid from its frame-0 vertices: every lattice cube with 8 vertices."""
    lo = x0.min(0)
    q = (x0 - lo) / cell
    ijk = np.rint(q).astype(np.int64)
    if np.abs(q - ijk).max() > 1e-6:
        return None
    index = {tuple(p): n for n, p in enumerate(ijk)}
    voxels = [tuple(p) for p in ijk
              if all((p[0] + dx, p[1] + dy, p[2] + dz) in index for dx in (0, 1) for dy in (0, 1) for dz in (0, 1))]
    return kuhn_tets(index, voxels) if voxels else None


def tetgen_tets(base, scale, translate, x0):
    nodes = np.loadtxt(base + ".node", skiprows=1, comments="#", ndmin=2)
    ele = np.loadtxt(base + ".ele", skiprows=1, comments="#", ndmin=2).astype(np.int64)
    first = int(nodes[:, 0].min())
    pos = nodes[:, 1:4] * scale + np.array(translate)
    key = lambda p: tuple(np.round(p / 1e-9).astype(np.int64))
    frame_index = {key(p): n for n, p in enumerate(x0)}
    try:
        remap = np.array([frame_index[key(p)] for p in pos])
    except KeyError:
        return None
    return remap[ele[:, 1:5] - first]


def boundary(tets):
    faces = np.concatenate([tets[:, [0, 1, 2]], tets[:, [0, 1, 3]], tets[:, [0, 2, 3]], tets[:, [1, 2, 3]]])
    faces = np.sort(faces, 1)
    uniq, count = np.unique(faces, axis=0, return_counts=True)
    return uniq[count == 1]


def signed_volumes(x, tets):
    a, b, c, d = (x[tets[:, i]] for i in range(4))
    return np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0


def elastic_energy(x, x0, tets, model, young, poisson):
    """Elastic energy of the tets at x, rest shape x0 (integrators/fem/tet_fem.cpp's energies):
    corotational vol (mu sum (s_i - 1)^2 + lambda/2 (sum s_i - 3)^2), s the signed singular values
    of F; linear vol (mu eps:eps + lambda/2 tr(eps)^2), eps = sym(F) - I."""
    mu = young / (2 * (1 + poisson))
    lam = young * poisson / ((1 + poisson) * (1 - 2 * poisson))
    edges = lambda y: np.stack([y[tets[:, i]] - y[tets[:, 0]] for i in (1, 2, 3)], 2)
    Dm = edges(x0)
    vol = np.abs(np.linalg.det(Dm)) / 6.0
    F = edges(x) @ np.linalg.inv(Dm)
    if model == "linear":
        eps = 0.5 * (F + np.transpose(F, (0, 2, 1))) - np.eye(3)
        tr = np.trace(eps, axis1=1, axis2=2)
        return float(np.sum(vol * (mu * np.sum(eps * eps, (1, 2)) + 0.5 * lam * tr * tr)))
    U, sig, Vt = np.linalg.svd(F)
    flip = np.linalg.det(U) * np.linalg.det(Vt) < 0
    sig[flip, 2] *= -1
    return float(np.sum(vol * (mu * np.sum((sig - 1) ** 2, 1) + 0.5 * lam * (sig.sum(1) - 3) ** 2)))
