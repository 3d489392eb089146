"""Lidia symbol files of Bazel-built binaries, in the object-store layout.

The full guide is installed as share/doc/lidiagen/plugins.md (plugins/README.md).
A WORKSPACE declares this directory and its default toolchain:

    local_repository(name = "lidiagen", path = "/usr/local/share/lidiagen/bazel")
    register_toolchains("@lidiagen//:default_toolchain")

(with bzlmod: bazel_dep and local_path_override, see MODULE.bazel). Then:

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

Every input is one action (mnemonic LidiaSymbols) that runs lidiagen and
writes one tree artifact, so Bazel caches it and can run it remotely; it is
silent when it succeeds, but for lidiagen's warnings and one line when the
binary has no debug information (a default or -c opt build without -g: the
file then has function names only). lidiagen comes from the toolchain of type
@lidiagen//:toolchain_type: the default one (registered by MODULE.bazel, or by
register_toolchains("@lidiagen//:default_toolchain") in a WORKSPACE) runs the
label flag @lidiagen//:tool, by default the lidiagen that `make install` links
beside this file; register a lidia_toolchain of your own for other execution
platforms (remote execution, cross builds). A `tool` attribute on
lidia_symbols overrides both.

lidia_collect merges the aspect's trees of every cc_binary and
cc_shared_library reachable from its targets into one tree, for
`lidiagen upload`.

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

_TOOLCHAIN = str(Label("//:toolchain_type"))

def _missing_tool_impl(ctx):
    # Fails when run, not at analysis: a build that names another tool must
    # not stop on this one. The flag is named as this copy of the plugin is
    # called, whatever the repository's name.
    flag = "@%s//:tool" % ctx.label.workspace_name
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        output = script,
        is_executable = True,
        content = "#!/bin/sh\n" +
                  "echo 'lidiagen: this plugin directory has no lidiagen beside it (it is linked there by make install);" +
                  " build with --%s=<label>, give lidia_symbols a tool = label, or register a lidia_toolchain' >&2\n" % flag +
                  "exit 2\n",
    )
    return [DefaultInfo(executable = script)]

lidia_missing_tool = rule(
    implementation = _missing_tool_impl,
    executable = True,
    doc = "The tool when no lidiagen was installed beside the plugin: an executable that says so.",
)

def _toolchain_impl(ctx):
    return [platform_common.ToolchainInfo(tool = ctx.attr.tool[DefaultInfo].files_to_run)]

lidia_toolchain = rule(
    implementation = _toolchain_impl,
    attrs = {
        "tool": attr.label(
            mandatory = True,
            executable = True,
            allow_files = True,
            cfg = "exec",
            doc = "The lidiagen to run: an executable target or file that the execution platform can run.",
        ),
    },
    doc = """A lidiagen for the toolchain type @lidiagen//:toolchain_type. Wrap it in
toolchain(toolchain_type = "@lidiagen//:toolchain_type", exec_compatible_with = [...])
and register that to run lidiagen on other execution platforms.""",
)

def _is_elf_candidate(f):
    return f.extension not in _NOT_ELF and not f.basename.endswith(".runfiles_manifest")

def _deps_with(ctx, attrs, provider):
    """The targets in the rule's attributes `attrs` (lists or single labels) that give `provider`."""
    found = []
    for attr in attrs:
        deps = getattr(ctx.rule.attr, attr, None)
        if deps == None:
            continue
        if type(deps) != "list":
            deps = [deps]
        found += [dep for dep in deps if type(dep) == "Target" and provider in dep]
    return found

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
    for dep in _deps_with(ctx, _DEP_ATTRS, _DebugInfo):
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

# Runs lidiagen -v, keeps its report, and prints it only when the run fails;
# on success only its warnings, and one line when no file has line rows (no
# debug information) unless the options ask for symbols only.
_RUN = """label="$1" symbols_only="$2"; shift 2
report=$("$@" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    printf '%s\\n' "$report" >&2
    exit $rc
fi
printf '%s\\n' "$report" | grep -vE '^lidiagen: [0-9]+ files?, ' | grep -i 'warning' >&2
if [ "$symbols_only" = 0 ] && printf '%s\\n' "$report" | grep -q ' line rows)' &&
    ! printf '%s\\n' "$report" | grep ' line rows)' | grep -qv ' 0 line rows)'; then
    echo "lidiagen: warning: $label has no debug information: its symbol file has function names only" \
        "(build with -c dbg, or --copt=-g, or copts = [\\"-g\\"])" >&2
fi
exit 0
"""

def _convert(ctx, tool, elf_files, extra_inputs, out, tenant, layout, prefix_map, options, what):
    """One LidiaSymbols action: lidiagen ELF_FILES -o OUT (a tree artifact)."""
    symbols_only = "1" if [o for o in options if o in ("--symbols-only", "--no-lines")] else "0"
    args = ctx.actions.args()
    args.add(what)
    args.add(symbols_only)
    args.add(tool.executable)
    args.add_all(elf_files)
    args.add("-o", out.path)
    args.add("--layout", layout)
    args.add("--tenant", tenant)
    args.add_all(prefix_map, before_each = "--prefix-map")

    # Only the declared inputs, no state file in the tree, a line per output.
    args.add_all(["--no-debug-search", "--no-state", "-v"])
    args.add_all(options)
    ctx.actions.run_shell(
        command = _RUN,
        arguments = [args],
        tools = [tool],
        inputs = depset(elf_files, transitive = extra_inputs),
        outputs = [out],
        mnemonic = "LidiaSymbols",
        progress_message = "Writing Lidia symbols of %s" % what,
    )

def _tool(ctx, attr_tool = None):
    """The lidiagen to run: the rule's own tool attribute, else the toolchain's."""
    if attr_tool != None:
        return attr_tool[DefaultInfo].files_to_run
    return ctx.toolchains[_TOOLCHAIN].tool

def _check_prefix_map(prefix_map, where):
    for m in prefix_map:
        if m.find("=") < 1:
            fail("%s: prefix_map '%s' is not OLD=NEW (OLD not empty)" % (where, m))

def _check_options(options, where):
    for opt in options:
        if opt in ("-o", "--output", "--layout", "--tenant", "--state") or \
           opt.startswith(("-o", "--output=", "--layout=", "--tenant=", "--state=")):
            fail("%s: give '%s' through the tenant or layout attribute, not options" % (where, opt))

# ---- the aspects --------------------------------------------------------------------------

# The attributes lidia_aspect follows: the link's inputs, and what a filegroup,
# a genrule or a package rule gathers (so that lidia_collect finds binaries).
_COLLECT_ATTRS = _DEP_ATTRS + ["srcs", "data", "dynamic_deps"]

def _lidia_aspect_impl(target, ctx):
    info = _debug_info(target, ctx)
    below = [dep[LidiaSymbolsInfo].trees for dep in _deps_with(ctx, _COLLECT_ATTRS, LidiaSymbolsInfo)]
    elf_files = []
    if ctx.rule.kind in _BINARY_KINDS:
        elf_files = [f for f in target[DefaultInfo].files.to_list() if _is_elf_candidate(f)]
    if not elf_files:
        return [info, LidiaSymbolsInfo(trees = depset(transitive = below))]
    options = ctx.attr._options[_SettingInfo].value
    _check_options(options, "--@lidiagen//:options")
    prefix_map = ctx.attr._prefix_map[_SettingInfo].value
    _check_prefix_map(prefix_map, "--@lidiagen//:prefix_map")
    out = ctx.actions.declare_directory(target.label.name + ".lidia")
    _convert(
        ctx,
        _tool(ctx),
        elf_files,
        _split_debug_files(info),
        out,
        ctx.attr._tenant[_SettingInfo].value,
        ctx.attr._layout[_SettingInfo].value,
        prefix_map,
        options,
        str(target.label),
    )
    return [
        info,
        LidiaSymbolsInfo(trees = depset([out], transitive = below)),
        OutputGroupInfo(lidia = depset([out])),
    ]

lidia_aspect = aspect(
    implementation = _lidia_aspect_impl,
    attr_aspects = _COLLECT_ATTRS,
    attrs = {
        "_tenant": attr.label(default = Label("//:tenant")),
        "_layout": attr.label(default = Label("//:layout")),
        "_options": attr.label(default = Label("//:options")),
        "_prefix_map": attr.label(default = Label("//:prefix_map")),
    },
    toolchains = [_TOOLCHAIN],
    doc = "Each cc_binary and cc_shared_library: its Lidia symbol tree, in output group 'lidia'.",
)

# What lidia_symbols needs of its binaries, and nothing more: their split debug
# files. It declares no output, so that two copies of the plugin (an installed
# one and a vendored one) can both be used on the same targets.
def _lidia_info_aspect_impl(target, ctx):
    return [_debug_info(target, ctx)]

_lidia_info_aspect = aspect(
    implementation = _lidia_info_aspect_impl,
    attr_aspects = _DEP_ATTRS,
    doc = "The _DebugInfo of a C++ target: its linked output and split debug files.",
)

# ---- the collecting rule -------------------------------------------------------------------

def _merge(ctx, parts):
    """One tree for the bucket: the parts' files, merged (a LidiaMerge action)."""
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
    return tree

def _lidia_collect_impl(ctx):
    trees = depset(transitive = [t[LidiaSymbolsInfo].trees for t in ctx.attr.targets if LidiaSymbolsInfo in t])
    parts = trees.to_list()
    if not parts:
        fail("%s: no cc_binary or cc_shared_library is reachable from %s" %
             (ctx.label, [str(t.label) for t in ctx.attr.targets]))
    tree = _merge(ctx, parts)
    return [
        DefaultInfo(files = depset([tree])),
        LidiaSymbolsInfo(trees = depset([tree])),
        OutputGroupInfo(lidia = depset([tree]), lidia_parts = trees),
    ]

lidia_collect = rule(
    implementation = _lidia_collect_impl,
    attrs = {
        "targets": attr.label_list(
            mandatory = True,
            aspects = [lidia_aspect],
            doc = "Binaries, or targets that gather them (filegroup, genrule, packages...), " +
                  "followed through deps, srcs, data...",
        ),
    },
    doc = """One tree bazel-bin/<package>/<name> holding the aspect's files of every
cc_binary and cc_shared_library reachable from `targets` (the same actions as
--aspects=@lidiagen//:defs.bzl%lidia_aspect, so the same cache entries):
`lidiagen upload bazel-bin/<package>/<name> s3://...`.""",
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
        _convert(ctx, _tool(ctx, ctx.attr.tool), elf_files, extra, out, tenant, layout, prefix_map, options,
                 str(target.label))
        parts.append(out)
    tree = _merge(ctx, parts)
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
            aspects = [_lidia_info_aspect],
            doc = "Targets whose files are ELF binaries: cc_binary, cc_shared_library, genrule outputs...",
        ),
        "related": attr.label_list(aspects = [_lidia_info_aspect], doc = "Set by the macro: the :name behind :name.stripped and :name.dwp."),
        "tenant": attr.string(doc = "Tenant of the pyroscope layout; empty: --@lidiagen//:tenant (anonymous)."),
        "layout": attr.string(doc = "pyroscope, flat or another layout lidiagen knows; empty: --@lidiagen//:layout (pyroscope)."),
        "prefix_map": attr.string_list(doc = "File names rewritten, OLD=NEW each, the first that matches winning; " +
                                             "empty: --@lidiagen//:prefix_map (/proc/self/cwd/=: relative to the workspace)."),
        "options": attr.string_list(doc = "More lidiagen options (e.g. --symbols-only); empty: --@lidiagen//:options."),
        "tool": attr.label(
            executable = True,
            allow_files = True,
            cfg = "exec",
            doc = "The lidiagen to run, built for the exec configuration; empty: the toolchain's.",
        ),
        "_tenant": attr.label(default = Label("//:tenant")),
        "_layout": attr.label(default = Label("//:layout")),
        "_options": attr.label(default = Label("//:options")),
        "_prefix_map": attr.label(default = Label("//:prefix_map")),
    },
    toolchains = [_TOOLCHAIN],
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
      tool: the lidiagen label (default: the toolchain's, which runs
        --@lidiagen//:tool, the installed one).
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
