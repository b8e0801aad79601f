"""Binds a Debian-packaged library into Bazel through pkg-config.

The headers stay in /usr/include (already on the compiler's system include path), so the generated
cc_library only carries the compile and link flags pkg-config reports. A missing package fails at
fetch time with the name of the package and the command that installs it.
"""

def _pkg_config(ctx, args):
    result = ctx.execute(["pkg-config"] + args)
    if result.return_code != 0:
        fail("pkg-config {} failed: {}\nRun tools/setup.sh to install the Debian packages.".format(
            " ".join(args),
            result.stderr.strip(),
        ))
    return [f for f in result.stdout.strip().split(" ") if f]

def _pkg_config_library_impl(ctx):
    if ctx.which("pkg-config") == None:
        fail("pkg-config is not installed. Run tools/setup.sh.")
    cflags = _pkg_config(ctx, ["--cflags"] + ctx.attr.modules)
    libs = _pkg_config(ctx, ["--libs"] + ctx.attr.modules)

    # -D must reach every dependant; extra include dirs (e.g. /usr/include/fuse3) are linked into
    # the repository so `includes` can export them, since copts do not propagate.
    defines = [f[2:] for f in cflags if f.startswith("-D")]
    includes = []
    for i, flag in enumerate([f for f in cflags if f.startswith("-I")]):
        link = "include_{}".format(i)
        ctx.symlink(flag[2:], link)
        includes.append(link)
    ctx.file("WORKSPACE", 'workspace(name = "{}")\n'.format(ctx.name))
    ctx.file("BUILD", """# Generated from pkg-config {modules}.
cc_library(
    name = "{name}",
    hdrs = glob([{hdr_globs}]),
    includes = {includes},
    defines = {defines},
    linkopts = {linkopts},
    visibility = ["//visibility:public"],
)
""".format(
        name = ctx.name,
        modules = " ".join(ctx.attr.modules),
        hdr_globs = ", ".join(['"{}/**/*.h"'.format(i) for i in includes]),
        includes = repr(includes),
        defines = repr(defines),
        linkopts = repr(libs),
    ))

pkg_config_library = repository_rule(
    implementation = _pkg_config_library_impl,
    attrs = {
        "modules": attr.string_list(mandatory = True, doc = "pkg-config module names"),
    },
    local = True,
    environ = ["PKG_CONFIG_PATH"],
)
