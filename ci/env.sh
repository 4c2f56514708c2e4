# Sourced by the ci/ scripts: environment for building and running here.
# Open MPI refuses to run as root unless told; CI and these machines run as
# root. --oversubscribe lets 4 ranks share 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
if [ -d /usr/local/cuda/bin ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi
ZB_JOBS=${ZB_JOBS:-$(nproc)}
