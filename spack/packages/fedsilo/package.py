# Spack recipe for fedsilo (docs/hpc.md, "Spack"). The variants are the CMake options of the same
# meaning (CMakeLists.txt, cmake/blas.cmake); tests/integration/test_spack_recipe.sh checks that they stay
# in step and runs cmake_args() for each combination. Written against the package API of Spack 0.21-0.23
# (`from spack.package import *`); Spack 1.x moved the build systems into its builtin repository, which
# the guarded import below follows.
from spack.package import *  # noqa: F401,F403

try:
    from spack_repo.builtin.build_systems.cmake import CMakePackage  # noqa: F811 (Spack >= 1.0)
except ImportError:
    pass  # Spack 0.x: CMakePackage comes with spack.package


class Fedsilo(CMakePackage):
    """Cross-silo federated learning simulator on MPI: one process per silo group, parallel HDF5
    results, checkpoint and resume, rank-count invariant results."""

    # No public release to download yet: build from a checkout (spack develop, docs/hpc.md).
    version("0.1.0")

    variant("native", default=False,
            description="Compile for the build machine's CPU (-march=native); off lets Spack's target decide")
    variant("gemm", default="eigen", values=("eigen", "openblas"), multi=False,
            description="GEMM backend: fedsilo's and Eigen's kernels, or Eigen routed through the BLAS")
    variant("blas", default="openblas", values=("openblas", "blis", "generic"), multi=False,
            description="BLAS library: OpenBLAS, BLIS, or whichever provider of blas the spec picks")
    variant("man", default=True, description="Generate and install the man page from fedsilo --help")
    variant("onednn", default=False,
            description="Run the convolutions oneDNN was measured faster on through oneDNN (docs/performance.md)")
    variant("zfp", default=False,
            description="The zfp update compressor on the ZFP library (docs/compression.md)")
    variant("analysis", default=True,
            description="Run-time Python stack of fedsilo-analysis (h5py, numpy, scipy, matplotlib)")

    depends_on("cmake@3.18:", type="build")
    depends_on("mpi")
    # Results are written with parallel HDF5 (CMake stops on a serial build); the 1.10 API is used.
    depends_on("hdf5@1.10: +mpi")
    depends_on("eigen@3.4:")
    depends_on("boost@1.71: +program_options")
    depends_on("zlib-api")
    depends_on("openblas", when="blas=openblas")
    depends_on("blis", when="blas=blis")
    depends_on("blas", when="blas=generic")
    depends_on("onednn", when="+onednn")
    depends_on("zfp@1.0:", when="+zfp")
    depends_on("pkgconfig", type="build", when="+zfp")  # cmake/zfp.cmake's fallback when ZFP has no CMake package
    # The unit and integration tests (spack install --test=root): GoogleTest with GoogleMock.
    depends_on("googletest@1.12: +gmock", type="test")
    with when("+analysis"):
        depends_on("python@3.9:", type="run")
        depends_on("py-h5py", type="run")
        depends_on("py-numpy", type="run")
        depends_on("py-scipy", type="run")
        depends_on("py-matplotlib", type="run")

    def blas_package(self):
        """The dependency that provides the BLAS for the chosen `blas` variant."""
        return {"openblas": "openblas", "blis": "blis", "generic": "blas"}[self.spec.variants["blas"].value]

    def cmake_args(self):
        return [
            self.define_from_variant("FEDSILO_NATIVE", "native"),
            self.define_from_variant("FEDSILO_GEMM", "gemm"),
            self.define_from_variant("FEDSILO_BLAS", "blas"),
            self.define_from_variant("FEDSILO_MAN", "man"),
            self.define_from_variant("FEDSILO_ONEDNN", "onednn"),
            self.define_from_variant("FEDSILO_ZFP", "zfp"),
            # Exactly the provider Spack chose, not whatever FindBLAS would find first.
            self.define("BLAS_LIBRARIES", self.spec[self.blas_package()].libs.joined(";")),
            self.define("FEDSILO_BUILD_TESTS", self.run_tests),
            self.define("FEDSILO_BUILD_BENCH", False),
            self.define("FEDSILO_INSTALL", True),
        ]

    def check(self):
        """spack install --test=root: the unit tests (the integration tests need mpirun and a spare
        minute or more each; run them from the build directory with ctest -L integration)."""
        with working_dir(self.build_directory):
            ctest("-L", "unit", "--output-on-failure")
