/*-------------------------------------------------------------------------
 *
 * calibrate.h
 *	  Mechanism and accountant mathematics: pure functions of doubles.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DP_AGG_CALIBRATE_H
#define DP_AGG_CALIBRATE_H

#include <stdbool.h>

/* directed rounding of one operation */
extern double dp_add_up(double a, double b);
extern double dp_mul_up(double a, double b);
extern double dp_div_up(double a, double b);
extern double dp_mul_down(double a, double b);

extern double dp_log_norm_sf(double x);

/* continuous mechanisms */
extern double dp_laplace_scale(double epsilon, double sensitivity);
extern double dp_gaussian_delta(double sigma, double epsilon, double sensitivity);
extern double dp_gaussian_sigma(double epsilon, double delta, double sensitivity);

/* the discrete Gaussian on the integers, integer sensitivity */
extern double dp_discrete_gaussian_delta(double sigma, double epsilon, double sens_units);
extern double dp_discrete_gaussian_sigma(double epsilon, double delta, double sens_units);
extern double dp_discrete_gaussian_epsilon(double sigma, double delta, double sens_units);

/* amplification by subsampling and Renyi DP */
extern double dp_amplified_epsilon(double epsilon0, double q);
extern double dp_base_epsilon(double epsilon, double q);
extern double dp_rdp_sampled_gaussian(double q, double sigma, double alpha);
extern double dp_rdp_sampled_gaussian_fast(double q, double sigma, double alpha);
extern double dp_rdp_to_epsilon(const double *orders, const double *rdp, int n, double delta);
extern const double *dp_rdp_orders(int *n);
extern double dp_sampled_gaussian_epsilon(double q, double sigma, double steps, double delta);
extern double dp_rdp_sampled_gaussian_sigma(double epsilon, double delta, double q);
extern double dp_sampled_gaussian_sigma(double epsilon, double delta, double q, double sens,
										int *method);

/* Renyi DP of releases, and budgets */
#define DP_RDP_ORDERS (99 + 53 + 4)

typedef struct DpBudget
{
	double		epsilon_limit;
	double		delta_limit;
	double		epsilon_spent;
	double		delta_spent;
	bool		renyi;			/* accounting 'rdp' */
	double		rdp[DP_RDP_ORDERS];	/* composed Renyi DP curve */
} DpBudget;

extern double dp_rdp_discrete_laplace(double lambda, double d, double alpha);
extern double dp_rdp_gaussian(double noise_multiplier, double alpha);
extern bool dp_budget_admits(const DpBudget *b, double epsilon, double delta,
							 const double *curve, double *composed);

/* intervals of the noise */
extern double dp_noise_halfwidth(bool laplace, double scale, double confidence, int shift);

#endif							/* DP_AGG_CALIBRATE_H */
