"""Lidia symbol files of Bazel-built binaries, in the object-store layout.

    load("@lidiagen//:defs.bzl", "lidia_symbols")

    lidia_symbols(
        name = "symbols",
        binaries = [":server", ":libplugin.so"],
        tenant = "team-a",
    )

makes bazel-bin/<package>/symbols/symbolizer/team-a/<build-id>, a tree to sync to
the bucket as it is. Without editing BUILD files:

    bazel build --aspects=@lidiagen//:defs.bzl%lidia_aspect --output_groups=lidia //...

gives each cc_binary (executables and linkshared = 1 libraries) and
cc_shared_library a tree bazel-bin/<package>/<name>.lidia/symbolizer/anonymous/<build-id>;
--@lidiagen//:tenant, --@lidiagen//:layout, --@lidiagen//:options and
--@lidiagen//:prefix_map set what the aspect (and any lidia_symbols that leaves
them empty) passes to lidiagen.

File names are written relative to the workspace: Bazel's C++ actions run
with PWD=/proc/self/cwd, which compilers record as the directory of every
source, and prefix_map (default --@lidiagen//:prefix_map, "/proc/self/cwd/=") maps that
away, as lidiagen --prefix-map OLD=NEW does, the first rule that matches
winning.

Every input is one action (mnemonic LidiaSymbols) that runs the lidiagen tool in
the exec configuration and writes one tree artifact, so Bazel caches it and can
run it remotely. The tool is the label flag @lidiagen//:tool, by default the
lidiagen that `make install` links beside this file (a `tool` attribute or
--@lidiagen//:tool=//some:label picks another, e.g. one Bazel builds).

Split debug info is used when present: the .dwo files of the binary and of the
libraries linked into it (--fission), found through the compile actions, are
inputs of the action and lidiagen reads them through the skeleton units; a
`:name.stripped` entry is converted together with the unstripped `:name`
behind it (one file, the same build ID), and a `:name.dwp` entry gives
`:name` with the .dwo files the .dwp was made from (lidiagen reads those, or
the .dwp itself when it lies beside the binary).
"""

LidiaSymbolsInfo = provider(
    doc = "Lidia symbol trees.",
    fields = {"trees": "depset of tree artifacts, each in the layout lidiagen was given"},
)

_DebugInfo = provider(
    doc = "What the aspect learns of a C++ target: its linked output and split debug files.",
    fields = {
        "binary": "File: the linked ELF output of a binary kind, or None",
        "dwo": "depset of the .dwo files of non-PIC compiles, this target's and its deps'",
        "pic_dwo": "depset of the .pic.dwo files, this target's and its deps'",
        "pic": "list of bools: whether the link takes PIC objects, non-PIC ones (both may be true)",
    },
)

_SettingInfo = provider(fields = ["value"])

# Targets whose linked output gets a symbol file from lidia_aspect.
_BINARY_KINDS = ["cc_binary", "cc_shared_library"]

# Where the objects linked into a binary come from.
_DEP_ATTRS = ["deps", "implementation_deps", "roots", "malloc"]

# Files of DefaultInfo that are never the ELF binaries lidiagen converts.
_NOT_ELF = ["a", "lo", "o", "d", "dwo", "dwp", "ifso", "params", "h", "hpp", "txt", "json", "runfiles_manifest"]

def _setting_impl(ctx):
    return [_SettingInfo(value = ctx.build_setting_value)]

lidia_string_flag = rule(
    implementation = _setting_impl,
    build_setting = config.string(flag = True),
    doc = "A string command-line flag of this plugin (tenant, layout).",
)

lidia_string_list_flag = rule(
    implementation = _setting_impl,
    build_setting = config.string_list(flag = True),
    doc = "A list command-line flag of this plugin (options).",
)

def _missing_tool_impl(ctx):
    # Fails when run, not at analysis: a build that names another tool must
    # not stop on this one.
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        output = script,
        is_executable = True,
        content = "#!/bin/sh\n" +
                  "echo 'lidiagen: this plugin directory has no lidiagen beside it (it is linked there by make install);" +
                  " give lidia_symbols a tool = label, or build with --@lidiagen//:tool=<label>' >&2\n" +
                  "exit 2\n",
    )
    return [DefaultInfo(executable = script)]

lidia_missing_tool = rule(
    implementation = _missing_tool_impl,
    executable = True,
    doc = "The tool when no lidiagen was installed beside the plugin: an executable that says so.",
)

def _is_elf_candidate(f):
    return f.extension not in _NOT_ELF and not f.basename.endswith(".runfiles_manifest")

def _debug_info(target, ctx):
    """The _DebugInfo of a target, from its own actions and its deps' _DebugInfo."""
    dwo, pic_dwo = [], []
    compiled = {}
    link_inputs = None
    binary = None
    outputs = target[DefaultInfo].files.to_list() if ctx.rule.kind in _BINARY_KINDS else []
    wanted = {f.path: f for f in outputs if _is_elf_candidate(f)}
    for action in getattr(target, "actions", []):
        if action.mnemonic == "CppCompile":
            for f in action.outputs.to_list():
                if f.extension == "dwo":
                    (pic_dwo if f.basename.endswith(".pic.dwo") else dwo).append(f)
        elif action.mnemonic == "CppLink" and wanted and link_inputs == None:
            for f in action.outputs.to_list():
                if f.path in wanted:
                    binary = f
                    link_inputs = action.inputs
                    break
    trans_dwo, trans_pic = [], []
    for attr in _DEP_ATTRS:
        deps = getattr(ctx.rule.attr, attr, None)
        if deps == None:
            continue
        if type(deps) != "list":
            deps = [deps]
        for dep in deps:
            if type(dep) == "Target" and _DebugInfo in dep:
                trans_dwo.append(dep[_DebugInfo].dwo)
                trans_pic.append(dep[_DebugInfo].pic_dwo)

    # Which objects the link takes: PIC (.pic.o, .pic.a), non-PIC, or both.
    pic = [False, False]
    if link_inputs != None and (dwo or pic_dwo or trans_dwo):
        for f in link_inputs.to_list():
            if f.extension in ("o", "a", "lo"):
                if ".pic." in f.basename:
                    pic[0] = True
                else:
                    pic[1] = True
    return _DebugInfo(
        binary = binary,
        dwo = depset(dwo, transitive = trans_dwo),
        pic_dwo = depset(pic_dwo, transitive = trans_pic),
        pic = pic,
    )

def _split_debug_files(info):
    """The .dwo files of the objects a binary links, as a list of depsets."""
    if info == None:
        return []
    files = []
    if info.pic[0]:
        files.append(info.pic_dwo)
    if info.pic[1]:
        files.append(info.dwo)
    return files

def _convert(ctx, tool, elf_files, extra_inputs, out, tenant, layout, prefix_map, options, what):
    """One LidiaSymbols action: lidiagen ELF_FILES -o OUT (a tree artifact)."""
    args = ctx.actions.args()
    args.add_all(elf_files)
    args.add("-o", out.path)
    args.add("--layout", layout)
    args.add("--tenant", tenant)
    args.add_all(prefix_map, before_each = "--prefix-map")

    # Only the declared inputs, no state file in the tree, errors only.
    args.add_all(["--no-debug-search", "--no-state", "-q"])
    args.add_all(options)
    ctx.actions.run(
        executable = tool,
        arguments = [args],
        inputs = depset(elf_files, transitive = extra_inputs),
        outputs = [out],
        mnemonic = "LidiaSymbols",
        progress_message = "Writing Lidia symbols of %s" % what,
    )

def _check_prefix_map(prefix_map, where):
    for m in prefix_map:
        if m.find("=") < 1:
            fail("%s: prefix_map '%s' is not OLD=NEW (OLD not empty)" % (where, m))

def _check_options(options, where):
    for opt in options:
        if opt in ("-o", "--output", "--layout", "--tenant", "--state") or \
           opt.startswith(("-o", "--output=", "--layout=", "--tenant=", "--state=")):
            fail("%s: give '%s' through the tenant or layout attribute, not options" % (where, opt))

# ---- the aspect ---------------------------------------------------------------------------

def _lidia_aspect_impl(target, ctx):
    info = _debug_info(target, ctx)
    if ctx.rule.kind not in _BINARY_KINDS:
        return [info]
    elf_files = [f for f in target[DefaultInfo].files.to_list() if _is_elf_candidate(f)]
    if not elf_files:
        return [info]
    options = ctx.attr._options[_SettingInfo].value
    _check_options(options, "--@lidiagen//:options")
    prefix_map = ctx.attr._prefix_map[_SettingInfo].value
    _check_prefix_map(prefix_map, "--@lidiagen//:prefix_map")
    out = ctx.actions.declare_directory(target.label.name + ".lidia")
    _convert(
        ctx,
        ctx.executable._tool,
        elf_files,
        _split_debug_files(info),
        out,
        ctx.attr._tenant[_SettingInfo].value,
        ctx.attr._layout[_SettingInfo].value,
        prefix_map,
        options,
        str(target.label),
    )
    trees = depset([out])
    return [info, LidiaSymbolsInfo(trees = trees), OutputGroupInfo(lidia = trees)]

lidia_aspect = aspect(
    implementation = _lidia_aspect_impl,
    attr_aspects = _DEP_ATTRS,
    attrs = {
        "_tool": attr.label(
            default = Label("//:tool"),
            executable = True,
            allow_files = True,
            cfg = "exec",
        ),
        "_tenant": attr.label(default = Label("//:tenant")),
        "_layout": attr.label(default = Label("//:layout")),
        "_options": attr.label(default = Label("//:options")),
        "_prefix_map": attr.label(default = Label("//:prefix_map")),
    },
    doc = "Each cc_binary and cc_shared_library: its Lidia symbol tree, in output group 'lidia'.",
)

# ---- the rule ------------------------------------------------------------------------------

_SUFFIXES = [".stripped", ".dwp"]

def _slug(label):
    s = str(label)
    out = []
    for i in range(len(s)):
        c = s[i]
        out.append(c if c.isalnum() or c in "._-" else "_")
    return "".join(out).lstrip("_")

def _lidia_symbols_impl(ctx):
    tenant = ctx.attr.tenant or ctx.attr._tenant[_SettingInfo].value
    layout = ctx.attr.layout or ctx.attr._layout[_SettingInfo].value
    options = ctx.attr.options if ctx.attr.options else ctx.attr._options[_SettingInfo].value
    _check_options(options, str(ctx.label))
    prefix_map = ctx.attr.prefix_map if ctx.attr.prefix_map else ctx.attr._prefix_map[_SettingInfo].value
    _check_prefix_map(prefix_map, str(ctx.label))
    related = {str(t.label): t for t in ctx.attr.related}
    parts = []
    seen = {}
    for target in ctx.attr.binaries:
        files = target[DefaultInfo].files.to_list()
        elf_files = [f for f in files if _is_elf_candidate(f)]
        extra = []
        info = target[_DebugInfo] if _DebugInfo in target else None
        extra += _split_debug_files(info)

        # ":name.stripped" and ":name.dwp": the cc_binary ":name" behind them.
        for suffix in _SUFFIXES:
            name = target.label.name
            base = related.get(str(target.label.relative(":" + name[:-len(suffix)]))) if name.endswith(suffix) else None
            if base == None or _DebugInfo not in base or base[_DebugInfo].binary == None:
                continue
            unstripped = base[_DebugInfo].binary
            extra += _split_debug_files(base[_DebugInfo])
            if suffix == ".dwp":
                # Beside the binary: lidiagen reads the .dwo files (extra, above)
                # and names the .dwp only to say it is not read if they are missing.
                extra.append(depset(files))
                elf_files = [unstripped]
            else:
                elf_files = elf_files + [unstripped]
        if not elf_files:
            fail("%s: %s gives no ELF file to convert (files: %s)" %
                 (ctx.label, target.label, [f.short_path for f in files]))
        slug = _slug(target.label)
        if slug in seen:
            slug = "%s_%d" % (slug, len(parts))
        seen[slug] = True
        out = ctx.actions.declare_directory("_lidia/%s/%s" % (ctx.label.name, slug))
        _convert(ctx, ctx.executable.tool, elf_files, extra, out, tenant, layout, prefix_map, options, str(target.label))
        parts.append(out)

    # One tree for the bucket: the parts' files, merged.
    tree = ctx.actions.declare_directory(ctx.label.name)
    merge = ctx.actions.args()
    merge.add(tree.path)
    merge.add_all(parts, expand_directories = False)
    ctx.actions.run_shell(
        command = 'out="$1"; shift; for d in "$@"; do cp -RLf "$d/." "$out/"; done',
        arguments = [merge],
        inputs = parts,
        outputs = [tree],
        mnemonic = "LidiaMerge",
        progress_message = "Merging the Lidia symbols of %s" % ctx.label,
    )
    return [
        DefaultInfo(files = depset([tree])),
        LidiaSymbolsInfo(trees = depset([tree])),
        OutputGroupInfo(lidia = depset([tree]), lidia_parts = depset(parts)),
    ]

_lidia_symbols = rule(
    implementation = _lidia_symbols_impl,
    attrs = {
        "binaries": attr.label_list(
            allow_files = True,
            mandatory = True,
            aspects = [lidia_aspect],
            doc = "Targets whose files are ELF binaries: cc_binary, cc_shared_library, genrule outputs...",
        ),
        "related": attr.label_list(aspects = [lidia_aspect], doc = "Set by the macro: the :name behind :name.stripped and :name.dwp."),
        "tenant": attr.string(doc = "Tenant of the pyroscope layout; empty: --@lidiagen//:tenant (anonymous)."),
        "layout": attr.string(doc = "pyroscope, flat or another layout lidiagen knows; empty: --@lidiagen//:layout (pyroscope)."),
        "prefix_map": attr.string_list(doc = "File names rewritten, OLD=NEW each, the first that matches winning; " +
                                             "empty: --@lidiagen//:prefix_map (/proc/self/cwd/=: relative to the workspace)."),
        "options": attr.string_list(doc = "More lidiagen options (e.g. --symbols-only); empty: --@lidiagen//:options."),
        "tool": attr.label(
            default = Label("//:tool"),
            executable = True,
            allow_files = True,
            cfg = "exec",
            doc = "The lidiagen to run, built for the exec configuration.",
        ),
        "_tenant": attr.label(default = Label("//:tenant")),
        "_layout": attr.label(default = Label("//:layout")),
        "_options": attr.label(default = Label("//:options")),
        "_prefix_map": attr.label(default = Label("//:prefix_map")),
    },
    doc = "One Lidia symbol tree for the ELF files of `binaries`, one lidiagen action per entry.",
)

def lidia_symbols(name, binaries, tenant = "", layout = "", prefix_map = [], options = [], tool = None, **kwargs):
    """The Lidia symbol files of `binaries`, merged into the tree artifact `name`.

    Args:
      name: the target; its output is the directory bazel-bin/<package>/<name>.
      binaries: labels whose files are ELF binaries (each one lidiagen action).
        `:x.stripped` and `:x.dwp` entries also bring the cc_binary `:x` (not
        when binaries is a select()).
      tenant: tenant of the pyroscope layout (default --@lidiagen//:tenant, anonymous).
      layout: lidiagen's --layout (default --@lidiagen//:layout, pyroscope).
      prefix_map: file names rewritten, OLD=NEW each, the first that matches
        winning (default --@lidiagen//:prefix_map, "/proc/self/cwd/=": names
        relative to the workspace). Give "/proc/self/cwd/=" too to keep that.
      options: more lidiagen options (default --@lidiagen//:options).
      tool: the lidiagen label (default --@lidiagen//:tool, the installed one).
      **kwargs: visibility, tags, testonly...
    """
    related = []
    if type(binaries) == "list":
        for b in binaries:
            for suffix in _SUFFIXES:
                if b.endswith(suffix) and b[:-len(suffix)] not in related:
                    related.append(b[:-len(suffix)])
    if tool != None:
        kwargs["tool"] = tool
    _lidia_symbols(
        name = name,
        binaries = binaries,
        related = related,
        tenant = tenant,
        layout = layout,
        prefix_map = prefix_map,
        options = options,
        **kwargs
    )
