extern const char kBuildScmRevision[];
const char kBuildScmRevision[] = BUILD_SCM_REVISION;
extern const char kBuildScmStatus[];
const char kBuildScmStatus[] = BUILD_SCM_STATUS;
