// The LAPACK routines the decompositions call (Fortran symbols of the
// LP64 interface Debian's liblapack3 and OpenBLAS export), with
// overloads by element type so the kernels are written once. Debian ships
// no C header for them (lapacke.h is another package and another API):
// these are the reference prototypes, with gfortran's hidden length
// argument for each CHARACTER parameter.
#pragma once

#include <cstddef>

extern "C" {
// clang-format off
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, std::size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, std::size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
             std::size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
             std::size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, std::size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info, std::size_t);
// clang-format on
}

namespace tessel::cpu::lapack {

// clang-format off
inline void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) { dgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrs(int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info) { sgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void getrs(int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info) { dgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void potrf_lower(int n, float* a, int lda, int* info) { spotrf_("L", &n, a, &lda, info, 1); }
inline void potrf_lower(int n, double* a, int lda, int* info) { dpotrf_("L", &n, a, &lda, info, 1); }
inline void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) { sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); }
inline void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) { dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info); }
inline void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) { sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) { dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void syevd(char jobz, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork, int liwork, int* info) { ssyevd_(&jobz, "L", &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1); }
inline void syevd(char jobz, int n, double* a, int lda, double* w, double* work, int lwork, int* iwork, int liwork, int* info) { dsyevd_(&jobz, "L", &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1); }
inline void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt, float* work, int lwork, int* iwork, int* info) { sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1); }
inline void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt, double* work, int lwork, int* iwork, int* info) { dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1); }
// clang-format on

}  // namespace tessel::cpu::lapack
